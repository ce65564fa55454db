# Exports more of R's mlbench sets (Debian: r-cran-mlbench) the way the
# shared dna, vehicle and vowel sets were made: shuffled once with a fixed
# seed, split 2/3 sensitive (features and `class`), 1/3 public (features),
# the public part's true labels in a third file. Run from an empty folder;
# then `bash .ci/utility/mlbench/make.sh` turns the CSVs into Parquet.
library(mlbench)
exp <- function(name, df, lab) {
  set.seed(20261128)
  names(df) <- gsub("\\.", "_", tolower(names(df)))
  lab <- tolower(lab)
  df <- df[sample(nrow(df)), ]
  cut <- floor(nrow(df) * 2 / 3)
  priv <- df[1:cut, ]
  pub <- df[(cut + 1):nrow(df), ]
  names(priv)[names(priv) == lab] <- "class"
  write.csv(priv, paste0(name, "_private.csv"), row.names = FALSE)
  write.csv(pub[, setdiff(names(pub), lab), drop = FALSE], paste0(name, "_public.csv"), row.names = FALSE)
  write.csv(data.frame(class = pub[[lab]]), paste0(name, "_public_truth.csv"), row.names = FALSE)
}
data(LetterRecognition); exp("letter", LetterRecognition, "lettr")
data(Satellite); exp("satellite", Satellite, "classes")
data(Shuttle); exp("shuttle", Shuttle, "Class")
data(Glass); exp("glass", Glass, "Type")
