//go:build amd64 && !purego

#include "textflag.h"

// func slideUpdateAVX2(row, vn, vo *float64, n int, xn, xo float64)
//
// row[j] += xn·vn[j] − xo·vo[j], j < n (n a multiple of 4): one rank-2 update of a tile row of
// sliding-window cross-products (docs/algorithms.md, "Dynamic connectivity"), 4 pairs per FMA.
TEXT ·slideUpdateAVX2(SB), NOSPLIT, $0-48
	MOVQ         row+0(FP), DI
	MOVQ         vn+8(FP), SI
	MOVQ         vo+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD xn+32(FP), Y0
	VBROADCASTSD xo+40(FP), Y1
	SHLQ         $3, CX
	XORQ         DX, DX
	CMPQ         DX, CX
	JGE          udone

uloop:
	VMOVUPD      (DI)(DX*1), Y5
	VFMADD231PD  (SI)(DX*1), Y0, Y5
	VFNMADD231PD (R8)(DX*1), Y1, Y5
	VMOVUPD      Y5, (DI)(DX*1)
	ADDQ         $32, DX
	CMPQ         DX, CX
	JLT          uloop

udone:
	VZEROUPPER
	RET

// func slideTestAVX2(row, vn, vo, as, ds *float64, n int, xn, xo, ai, bi float64, abs bool, hits *int32) int
//
// The update of slideUpdateAVX2 fused with the window's test: c = row[j] − ai·as[j] (|c| with
// abs) against bi·ds[j]; for every group of 4 with some c > bi·ds[j] (ordered: NaN fails) it
// writes j·4 + the 4-bit mask to hits and returns how many it wrote (≤ n/4).
TEXT ·slideTestAVX2(SB), NOSPLIT, $0-104
	MOVQ         row+0(FP), DI
	MOVQ         vn+8(FP), SI
	MOVQ         vo+16(FP), R8
	MOVQ         as+24(FP), R9
	MOVQ         ds+32(FP), R10
	MOVQ         n+40(FP), CX
	VBROADCASTSD xn+48(FP), Y0
	VBROADCASTSD xo+56(FP), Y1
	VBROADCASTSD ai+64(FP), Y2
	VBROADCASTSD bi+72(FP), Y3
	MOVQ         $-1, AX
	MOVBLZX      abs+80(FP), BX
	TESTQ        BX, BX
	JE           nomask
	MOVQ         $0x7fffffffffffffff, AX

nomask:
	MOVQ         AX, X4
	VBROADCASTSD X4, Y4
	MOVQ         hits+88(FP), R11
	XORQ         R12, R12             // hits written
	SHLQ         $3, CX
	XORQ         DX, DX
	CMPQ         DX, CX
	JGE          tdone

tloop:
	VMOVUPD      (DI)(DX*1), Y5
	VFMADD231PD  (SI)(DX*1), Y0, Y5
	VFNMADD231PD (R8)(DX*1), Y1, Y5
	VMOVUPD      Y5, (DI)(DX*1)
	VFNMADD231PD (R9)(DX*1), Y2, Y5   // c = S − ai·as
	VANDPD       Y4, Y5, Y5
	VMULPD       (R10)(DX*1), Y3, Y7  // bi·ds
	VCMPPD       $0x1e, Y7, Y5, Y8    // c > bi·ds, ordered
	VMOVMSKPD    Y8, AX
	TESTL        AX, AX
	JNE          thit

tnext:
	ADDQ         $32, DX
	CMPQ         DX, CX
	JLT          tloop

tdone:
	MOVQ         R12, ret+96(FP)
	VZEROUPPER
	RET

thit:
	MOVQ         DX, BX
	SHRQ         $1, BX               // byte offset / 8 · 4 = j·4
	ORQ          AX, BX
	MOVL         BX, (R11)(R12*4)
	INCQ         R12
	JMP          tnext
