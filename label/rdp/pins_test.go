package rdp

// Regression pins for the SVHN and Adult Table 2 analyses, measured with this
// package (see TestAnalyzeTable2). The published Table 2 of PATE 2018 prints
// SVHN 3098 answered, ε 4.96 and Adult 524 answered, ε 1.68.
const (
	pinSVHNAnswered  = 2969.0914
	pinSVHNEps       = 4.915203
	pinSVHNOrder     = 7.5
	pinSVHNEpsInd    = 12.392967
	pinSVHNOrderInd  = 3.5
	pinAdultAnswered = 538.2613
	pinAdultEps      = 1.678180
	pinAdultOrder    = 15.5
	pinAdultEpsInd   = 4.401821
	pinAdultOrderInd = 6.5
)
