package metis

import "math"

// MaxArcs is the largest global arc count (adjacency entries of the
// symmetrised graph) ParMetisDistributed can take: PT-Scotch's ParMETIS v3
// layer as Debian builds it indexes with a 32-bit SCOTCH_Num.
const MaxArcs = math.MaxInt32
