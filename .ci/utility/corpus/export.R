# Exports the benchmark corpus from Debian's R data packages (see make.sh):
# each set is shuffled once with a fixed seed and split 2/3 sensitive
# (features and `class`), 1/3 public (features), the public part's true
# labels in a third file, as the mlbench sets are. Factors, ordered factors
# and logicals become text (NAME.types lists them for the converter);
# missing values are written as empty fields, which DuckDB reads as nulls.
# Also writes corpus_summary.csv (one line per set) and sets.txt.
# Run from an empty folder.
suppressPackageStartupMessages({
  library(mlbench); library(AER); library(carData); library(dslabs)
  library(MASS); library(rpart); library(HSAUR3); library(survival)
  library(vcd); library(ade4); library(pscl)
  library(TH.data)
})
summary_rows <- list()
get_data <- function(pkg, nm) {
  e <- new.env()
  data(list = nm, package = pkg, envir = e)
  get(nm, envir = e)
}
# expand turns a frequency table (a table, or a data frame with a Freq
# column) into one row per counted case.
expand <- function(d) {
  if (is.table(d)) d <- as.data.frame(d)
  d <- d[rep(seq_len(nrow(d)), d$Freq), setdiff(names(d), "Freq"), drop = FALSE]
  rownames(d) <- NULL
  d
}
exp <- function(name, pkg, nm, lab, drop = character(0), id = FALSE,
                covers = "", d = NULL, nsample = 0) {
  if (is.null(d)) d <- get_data(pkg, nm)
  d <- as.data.frame(d)
  d <- d[, setdiff(names(d), drop), drop = FALSE]
  d <- d[!is.na(d[[lab]]), , drop = FALSE]
  names(d) <- gsub("[^a-z0-9]+", "_", tolower(names(d)))
  lab <- gsub("[^a-z0-9]+", "_", tolower(lab))
  names(d)[names(d) == "class" & names(d) != lab] <- "class_" # the label's name
  text <- character(0)
  for (c in names(d)) {
    x <- d[[c]]
    if (inherits(x, "POSIXt") || inherits(x, "Date")) stop(name, ": drop date column ", c)
    if (is.factor(x) || is.character(x) || is.logical(x)) {
      d[[c]] <- as.character(x)
      text <- c(text, c)
    } else if (c == lab) {
      d[[c]] <- as.character(x)
    }
  }
  set.seed(20261207)
  if (nsample > 0 && nrow(d) > nsample) d <- d[sample(nrow(d), nsample), , drop = FALSE]
  d <- d[sample(nrow(d)), , drop = FALSE]
  rownames(d) <- NULL
  if (id) d <- cbind(data.frame(id = seq_len(nrow(d))), d)
  cut <- floor(nrow(d) * 2 / 3)
  priv <- d[1:cut, , drop = FALSE]
  pub <- d[(cut + 1):nrow(d), , drop = FALSE]
  names(priv)[names(priv) == lab] <- "class"
  write.csv(priv, paste0(name, "_private.csv"), row.names = FALSE, na = "")
  write.csv(pub[, setdiff(names(pub), lab), drop = FALSE], paste0(name, "_public.csv"), row.names = FALSE, na = "")
  write.csv(data.frame(class = pub[[lab]]), paste0(name, "_public_truth.csv"), row.names = FALSE, na = "")
  writeLines(c("class", setdiff(text, lab)), paste0(name, ".types"))
  feats <- setdiff(names(d), lab)
  tab <- table(d[[lab]])
  summary_rows[[length(summary_rows) + 1]] <<- data.frame(
    set = name, source = paste0(pkg, "::", nm), rows = nrow(d), sensitive = cut,
    classes = length(tab), features = length(feats),
    text_features = length(setdiff(text, lab)),
    levels = sum(vapply(setdiff(text, lab), function(c) length(unique(na.omit(d[[c]]))), 0)),
    minority = round(min(tab) / sum(tab), 3),
    null_cells = sum(is.na(d[, feats, drop = FALSE])),
    covers = covers)
}

# mlbench (GPL-2)
exp("soybean", "mlbench", "Soybean", "Class", covers = "many classes; all categorical; wide one-hot; nulls")
exp("housevotes84", "mlbench", "HouseVotes84", "Class", covers = "all categorical; nulls")
exp("breastcancer_wi", "mlbench", "BreastCancer", "Class", drop = "Id", covers = "ordinal levels as text; nulls")
exp("ionosphere", "mlbench", "Ionosphere", "Class", covers = "small; 34 numeric")
exp("pima2", "mlbench", "PimaIndiansDiabetes2", "diabetes", covers = "nulls (zeros recoded as missing)")
# AER (GPL-2 | GPL-3)
exp("cps1988", "AER", "CPS1988", "ethnicity", covers = "large; imbalanced")
exp("bankwages", "AER", "BankWages", "job", covers = "imbalanced; small")
exp("resumenames", "AER", "ResumeNames", "call", covers = "imbalanced; mostly categorical, wide one-hot")
exp("hmda", "AER", "HMDA", "deny", covers = "imbalanced")
exp("creditcard", "AER", "CreditCard", "card")
exp("smokeban", "AER", "SmokeBan", "smoker", covers = "weak signal")
exp("nmes1988", "AER", "NMES1988", "health", covers = "imbalanced")
exp("fatalities", "AER", "Fatalities", "state", covers = "many classes, few rows; nulls")
exp("fertility", "AER", "Fertility", "morekids", nsample = 60000, covers = "large (a fixed sample of 60,000 of its rows)")
exp("healthinsurance", "AER", "HealthInsurance", "insurance", covers = "mostly categorical")
exp("collegedistance", "AER", "CollegeDistance", "education", covers = "ordinal classes; imbalanced")
# carData (GPL (>= 2))
exp("mplsstops", "carData", "MplsStops", "race", drop = c("idNum", "date", "preRace"),
    covers = "large; wide one-hot (neighbourhood); nulls")
exp("gssvocab", "carData", "GSSvocab", "educGroup", drop = "educ", id = TRUE,
    covers = "large; an integer id column in both files; nulls")
exp("chile", "carData", "Chile", "vote", covers = "nulls")
exp("wvs", "carData", "WVS", "poverty", covers = "mostly categorical")
exp("arrests", "carData", "Arrests", "released", covers = "imbalanced")
exp("slid", "carData", "SLID", "language", covers = "imbalanced; nulls")
exp("beps", "carData", "BEPS", "vote")
exp("ces11", "carData", "CES11", "abortion", covers = "the survey's own id column (unique per row)")
# dslabs (Artistic-2.0)
exp("gapminder", "dslabs", "gapminder", "region", drop = "country", covers = "many classes; nulls")
exp("contagious", "dslabs", "us_contagious_diseases", "state", covers = "many classes; nulls")
exp("olive", "dslabs", "olive", "area", drop = "region", covers = "many classes, few rows")
# MASS (GPL-2 | GPL-3)
exp("aids2", "MASS", "Aids2", "status")
# rpart (GPL-2 | GPL-3)
exp("solder", "rpart", "solder", "Solder", covers = "mostly categorical; balanced")
# HSAUR3 (GPL-2)
exp("forbes2000", "HSAUR3", "Forbes2000", "category", drop = c("rank", "name"),
    covers = "many classes; wide one-hot (country); nulls")
exp("chfls", "HSAUR3", "CHFLS", "R_happy", covers = "ordinal classes; imbalanced")
# survival (LGPL (>= 2))
exp("flchain", "survival", "flchain", "death", drop = c("futime", "chapter"), covers = "nulls")
exp("nwtco", "survival", "nwtco", "histol", drop = "seqno", covers = "imbalanced")
exp("pbc", "survival", "pbc", "status", drop = c("id", "time"), covers = "imbalanced; nulls")
# datasets (part of R: GPL-2 | GPL-3)
exp("titanic", "datasets", "Titanic", "Survived", d = expand(Titanic), covers = "all categorical")
exp("ucbadmissions", "datasets", "UCBAdmissions", "Admit", d = expand(UCBAdmissions), covers = "all categorical")
# vcd (GPL-2)
exp("suicide", "vcd", "Suicide", "method", d = expand(get_data("vcd", "Suicide")),
    drop = c("method2", "age.group"), covers = "large; all categorical but age; imbalanced")
exp("danishwelfare", "vcd", "DanishWelfare", "Status", d = expand(get_data("vcd", "DanishWelfare")),
    covers = "all categorical")
# ade4 (GPL (>= 2))
exp("banque", "ade4", "banque", "csp", covers = "all categorical; wide one-hot")
# pscl (GPL-2)
exp("vote92", "pscl", "vote92", "vote")
# TH.data (GPL-3)
exp("mammoexp", "TH.data", "mammoexp", "ME", covers = "mostly categorical")

s <- do.call(rbind, summary_rows)
write.csv(s, "corpus_summary.csv", row.names = FALSE)
writeLines(s$set, "sets.txt")
