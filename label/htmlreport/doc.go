// Package htmlreport provides a self-contained HTML page for a pate run's
// privacy report: the parameters, inline SVG charts of the spend over the
// queries, of answered and abstained rows and of the released labels, the
// conversions side by side, and the guarantee in plain words. The page
// loads nothing from the network.
package htmlreport
