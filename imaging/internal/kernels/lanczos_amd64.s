//go:build !purego

#include "textflag.h"

// AVX2 kernels of the Lanczos passes (lanczos_amd64.go). Each sums
// pixel × coefficient products in 32-bit lanes that wrap as Go's int32
// does, then rounds as clip8: add 1<<21, shift right arithmetically by 22,
// saturate to 0..255 (VPACKSSDW, then VPACKUSWB).

DATA permLo<>+0(SB)/4, $0
DATA permLo<>+4(SB)/4, $0
DATA permLo<>+8(SB)/4, $0
DATA permLo<>+12(SB)/4, $0
DATA permLo<>+16(SB)/4, $1
DATA permLo<>+20(SB)/4, $1
DATA permLo<>+24(SB)/4, $1
DATA permLo<>+28(SB)/4, $1
GLOBL permLo<>(SB), RODATA|NOPTR, $32

DATA permHi<>+0(SB)/4, $2
DATA permHi<>+4(SB)/4, $2
DATA permHi<>+8(SB)/4, $2
DATA permHi<>+12(SB)/4, $2
DATA permHi<>+16(SB)/4, $3
DATA permHi<>+20(SB)/4, $3
DATA permHi<>+24(SB)/4, $3
DATA permHi<>+28(SB)/4, $3
GLOBL permHi<>(SB), RODATA|NOPTR, $32

DATA roundHalf<>+0(SB)/4, $0x200000
GLOBL roundHalf<>(SB), RODATA|NOPTR, $4

DATA alphaByte<>+0(SB)/4, $0xff000000
GLOBL alphaByte<>(SB), RODATA|NOPTR, $4

// func horizontalRGBAAVX2(out, in []byte, bounds []int, kk []int32, ksize int)
TEXT ·HorizontalRGBA(SB), NOSPLIT, $0-104
	MOVQ out_base+0(FP), DI
	MOVQ out_len+8(FP), CX
	SHRQ $2, CX
	MOVQ in_base+24(FP), SI
	MOVQ bounds_base+48(FP), BX
	MOVQ kk_base+72(FP), DX
	MOVQ ksize+96(FP), R8
	SHLQ $2, R8
	VMOVDQU permLo<>(SB), Y14
	VMOVDQU permHi<>(SB), Y15
	VPBROADCASTD roundHalf<>(SB), X13
	VPBROADCASTD alphaByte<>(SB), X12
	TESTQ CX, CX
	JZ   hdone

hpixel:
	MOVQ 0(BX), R9
	MOVQ 8(BX), R10
	LEAQ (SI)(R9*4), R11
	MOVQ DX, R12
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	CMPQ R10, $4
	JLT  htwo

hfour:
	VMOVDQU   (R12), X2
	VPERMD    Y2, Y14, Y3
	VPERMD    Y2, Y15, Y4
	VPMOVZXBD (R11), Y5
	VPMOVZXBD 8(R11), Y6
	VPMULLD   Y3, Y5, Y5
	VPMULLD   Y4, Y6, Y6
	VPADDD    Y5, Y0, Y0
	VPADDD    Y6, Y1, Y1
	ADDQ      $16, R12
	ADDQ      $16, R11
	SUBQ      $4, R10
	CMPQ      R10, $4
	JGE       hfour

htwo:
	CMPQ      R10, $2
	JLT       hone
	VMOVQ     (R12), X2
	VPERMD    Y2, Y14, Y3
	VPMOVZXBD (R11), Y5
	VPMULLD   Y3, Y5, Y5
	VPADDD    Y5, Y0, Y0
	ADDQ      $8, R12
	ADDQ      $8, R11
	SUBQ      $2, R10

hone:
	TESTQ        R10, R10
	JZ           hsum
	VPBROADCASTD (R12), X3
	VPMOVZXBD    (R11), X5
	VPMULLD      X3, X5, X5
	VPADDD       Y5, Y1, Y1

hsum:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPADDD       X13, X0, X0
	VPSRAD       $22, X0, X0
	VPACKSSDW    X0, X0, X0
	VPACKUSWB    X0, X0, X0
	VPOR         X12, X0, X0
	VMOVD        X0, (DI)
	ADDQ         $4, DI
	ADDQ         $16, BX
	ADDQ         R8, DX
	DECQ         CX
	JNZ          hpixel

hdone:
	VZEROUPPER
	RET

// PACK8 rounds the eight sums of Y into bytes, ORs them with Y12's low
// half and stores them at off(DI); X5 is clobbered.
#define PACK8(Y, X, off) \
	VPSRAD       $22, Y, Y;   \
	VEXTRACTI128 $1, Y, X5;   \
	VPACKSSDW    X5, X, X;    \
	VPACKUSWB    X, X, X;     \
	VPOR         X12, X, X;   \
	VMOVQ        X, off(DI)

// func verticalAVX2(out, src []byte, stride int, k []int32, orMask uint32)
TEXT ·Vertical(SB), NOSPLIT, $0-84
	MOVQ         out_base+0(FP), DI
	MOVQ         out_len+8(FP), CX
	MOVQ         src_base+24(FP), SI
	MOVQ         stride+48(FP), R8
	MOVQ         k_base+56(FP), DX
	MOVQ         k_len+64(FP), R9
	MOVL         orMask+80(FP), AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	VPBROADCASTD roundHalf<>(SB), Y13
	TESTQ        R9, R9
	JZ           vdone

vblock32:
	CMPQ    CX, $32
	JLT     vblock8
	MOVQ    SI, R10
	MOVQ    DX, R11
	MOVQ    R9, R12
	VMOVDQA Y13, Y0
	VMOVDQA Y13, Y1
	VMOVDQA Y13, Y2
	VMOVDQA Y13, Y3

vtap32:
	VPBROADCASTD (R11), Y4
	VPMOVZXBD    (R10), Y5
	VPMOVZXBD    8(R10), Y6
	VPMOVZXBD    16(R10), Y7
	VPMOVZXBD    24(R10), Y8
	VPMULLD      Y4, Y5, Y5
	VPMULLD      Y4, Y6, Y6
	VPMULLD      Y4, Y7, Y7
	VPMULLD      Y4, Y8, Y8
	VPADDD       Y5, Y0, Y0
	VPADDD       Y6, Y1, Y1
	VPADDD       Y7, Y2, Y2
	VPADDD       Y8, Y3, Y3
	ADDQ         R8, R10
	ADDQ         $4, R11
	DECQ         R12
	JNZ          vtap32
	PACK8(Y0, X0, 0)
	PACK8(Y1, X1, 8)
	PACK8(Y2, X2, 16)
	PACK8(Y3, X3, 24)
	ADDQ         $32, DI
	ADDQ         $32, SI
	SUBQ         $32, CX
	JMP          vblock32

vblock8:
	CMPQ    CX, $8
	JLT     vdone
	MOVQ    SI, R10
	MOVQ    DX, R11
	MOVQ    R9, R12
	VMOVDQA Y13, Y0

vtap8:
	VPBROADCASTD (R11), Y4
	VPMOVZXBD    (R10), Y5
	VPMULLD      Y4, Y5, Y5
	VPADDD       Y5, Y0, Y0
	ADDQ         R8, R10
	ADDQ         $4, R11
	DECQ         R12
	JNZ          vtap8
	PACK8(Y0, X0, 0)
	ADDQ         $8, DI
	ADDQ         $8, SI
	SUBQ         $8, CX
	JMP          vblock8

vdone:
	VZEROUPPER
	RET

DATA rgbShuffle<>+0(SB)/8, $0x8005040380020100
DATA rgbShuffle<>+8(SB)/8, $0x800b0a0980080706
GLOBL rgbShuffle<>(SB), RODATA|NOPTR, $16

// func ExpandRGB(dst, src []byte) int
TEXT ·ExpandRGB(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), DX
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	VMOVDQU      rgbShuffle<>(SB), X14
	VPBROADCASTD alphaByte<>(SB), X12
	XORQ         AX, AX

eloop:
	CMPQ      CX, $16
	JLT       edone
	CMPQ      DX, $16
	JLT       edone
	VMOVDQU   (SI), X0
	VPSHUFB   X14, X0, X0
	VPOR      X12, X0, X0
	VMOVDQU   X0, (DI)
	ADDQ      $12, SI
	SUBQ      $12, CX
	ADDQ      $16, DI
	SUBQ      $16, DX
	ADDQ      $4, AX
	JMP       eloop

edone:
	MOVQ AX, ret+48(FP)
	RET

DATA byteOnes<>+0(SB)/4, $0x01010101
GLOBL byteOnes<>(SB), RODATA|NOPTR, $4

// UNFILTERSETUP loads cur (SI), prev (DX), the bytes left (CX) and the
// pixel step (R8) for the unfilter kernels; AX counts the bytes done.
// They work on four bytes: of a 3-byte pixel, the fourth lane computes
// garbage that stays in its lane (no operation crosses byte or word
// lanes) and is never stored.
#define UNFILTERSETUP \
	MOVQ cur_base+0(FP), SI   \
	MOVQ cur_len+8(FP), CX    \
	MOVQ prev_base+24(FP), DX \
	MOVQ bpp+48(FP), R8       \
	XORQ AX, AX

// STOREPIXEL stores the pixel in the low bytes of X: three or four bytes
// (R8), never the byte after a 3-byte pixel, so the next pixel's load is
// not held up by this store; R10 is clobbered.
#define STOREPIXEL(X) \
	VMOVD X, R10     \
	CMPQ  R8, $4     \
	JNE   3(PC)      \
	MOVL  R10, (SI)  \
	JMP   4(PC)      \
	MOVW  R10, (SI)  \
	SHRL  $16, R10   \
	MOVB  R10, 2(SI)

// func UnfilterPaeth(cur, prev []byte, bpp int) int
//
// The left pixel stays in X0, so the loop's chain is the predictor alone.
TEXT ·UnfilterPaeth(SB), NOSPLIT, $0-64
	UNFILTERSETUP
	VPXOR X0, X0, X0 // a: the left pixel, 16-bit lanes
	VPXOR X1, X1, X1 // c: the up-left pixel

ploop:
	CMPQ      CX, $4
	JLT       pdone
	VMOVD     (SI), X2
	VMOVD     (DX), X3
	VPMOVZXBW X3, X3     // b
	VPSUBW    X1, X3, X4 // pa = b - c
	VPSUBW    X1, X0, X5 // pb = a - c
	VPADDW    X4, X5, X6 // pc = pa + pb
	VPABSW    X4, X4
	VPABSW    X5, X5
	VPABSW    X6, X6
	VPMINSW   X5, X4, X7
	VPMINSW   X6, X7, X7   // the smallest
	VPCMPEQW  X7, X4, X8   // pa smallest: a
	VPCMPEQW  X7, X5, X9   // else pb smallest: b
	VPBLENDVB X9, X3, X1, X10
	VPBLENDVB X8, X0, X10, X10
	VPACKUSWB X10, X10, X10
	VPADDB    X10, X2, X2
	STOREPIXEL(X2)
	VPMOVZXBW X2, X0
	VMOVDQA   X3, X1
	ADDQ      R8, SI
	ADDQ      R8, DX
	SUBQ      R8, CX
	ADDQ      R8, AX
	JMP       ploop

pdone:
	MOVQ AX, ret+56(FP)
	RET

// func UnfilterAverage(cur, prev []byte, bpp int) int
TEXT ·UnfilterAverage(SB), NOSPLIT, $0-64
	UNFILTERSETUP
	VPBROADCASTD byteOnes<>(SB), X13
	VPXOR        X0, X0, X0 // a: the left pixel

aloop:
	CMPQ    CX, $4
	JLT     adone
	VMOVD   (SI), X2
	VMOVD   (DX), X3
	VPAVGB  X3, X0, X4 // (a + b + 1) >> 1
	VPXOR   X3, X0, X5
	VPAND   X13, X5, X5
	VPSUBB  X5, X4, X4 // (a + b) >> 1
	VPADDB  X4, X2, X0
	STOREPIXEL(X0)
	ADDQ    R8, SI
	ADDQ    R8, DX
	SUBQ    R8, CX
	ADDQ    R8, AX
	JMP     aloop

adone:
	MOVQ AX, ret+56(FP)
	RET
