//go:build amd64 && !purego

#include "textflag.h"

// func prefetch4(p0, p1, p2, p3 unsafe.Pointer)
//
// PREFETCHT0 of four addresses: hints that never fault and retire at once, so that the local
// moving's next node's data is on its way while the current node is gathered.
TEXT ·prefetch4(SB), NOSPLIT, $0-32
	MOVQ p0+0(FP), AX
	PREFETCHT0 (AX)
	MOVQ p1+8(FP), AX
	PREFETCHT0 (AX)
	MOVQ p2+16(FP), AX
	PREFETCHT0 (AX)
	MOVQ p3+24(FP), AX
	PREFETCHT0 (AX)
	RET
