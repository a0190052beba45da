//go:build amd64 && !purego

#include "textflag.h"

// func prefetch6(p0, p1, p2, p3, p4, p5 unsafe.Pointer) uint64
//
// PREFETCHT0 of six addresses: hints that never fault and retire at once, so the loads behind
// them do not wait for the lines (docs/algorithms.md, "Random networks").
TEXT ·prefetch6(SB), NOSPLIT, $0-56
	MOVQ p0+0(FP), AX
	PREFETCHT0 (AX)
	MOVQ p1+8(FP), AX
	PREFETCHT0 (AX)
	MOVQ p2+16(FP), AX
	PREFETCHT0 (AX)
	MOVQ p3+24(FP), AX
	PREFETCHT0 (AX)
	MOVQ p4+32(FP), AX
	PREFETCHT0 (AX)
	MOVQ p5+40(FP), AX
	PREFETCHT0 (AX)
	MOVQ $0, ret+48(FP)
	RET
