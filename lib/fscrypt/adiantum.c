// SPDX-License-Identifier: GPL-2.0
/*
 * Adiantum (Crowley and Biggers, "Adiantum: length-preserving encryption for
 * entry-level processors", 2018), as Linux's adiantum(xchacha12,aes): the
 * wide-block mode fscrypt uses for both contents and names with
 * FSCRYPT_MODE_ADIANTUM. OpenSSL has neither ChaCha12 nor NH, so this file
 * holds them: the ChaCha permutation with 12 rounds, HChaCha12 and the
 * XChaCha12 stream, and NH. Poly1305 and the one AES-256 block per message
 * are OpenSSL's. The 32-byte tweak and the key derivation are Linux's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "alg.h"
#include "alg_int.h"

#define CHACHA_ROUNDS	12
#define NH_CHUNK	1024	/* NH hashes the message 1024 bytes at a time */
#define NH_UNIT		16
#define NH_KEY_BYTES	1072	/* 1024 + 3 passes' offset of 16 bytes */

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* /// ChaCha12 and XChaCha12 /// */

#define ROTL32(v, n)	((v) << (n) | (v) >> (32 - (n)))
#define QUARTER(a, b, c, d) do {				\
		a += b; d ^= a; d = ROTL32(d, 16);		\
		c += d; b ^= c; b = ROTL32(b, 12);		\
		a += b; d ^= a; d = ROTL32(d, 8);		\
		c += d; b ^= c; b = ROTL32(b, 7);		\
	} while (0)

/* One state: HChaCha12 only (the stream runs several blocks at once). */
static void chacha_permute(uint32_t x[16])
{
	for (int i = 0; i < CHACHA_ROUNDS; i += 2) {
		QUARTER(x[0], x[4], x[8], x[12]);
		QUARTER(x[1], x[5], x[9], x[13]);
		QUARTER(x[2], x[6], x[10], x[14]);
		QUARTER(x[3], x[7], x[11], x[15]);
		QUARTER(x[0], x[5], x[10], x[15]);
		QUARTER(x[1], x[6], x[11], x[12]);
		QUARTER(x[2], x[7], x[8], x[13]);
		QUARTER(x[3], x[4], x[9], x[14]);
	}
}

/*
 * `lanes` consecutive blocks side by side: x[word * lanes + lane]. Each step
 * is a loop over the lanes with no dependence between them, which gcc -O2
 * turns into one SIMD instruction per step with no intrinsics here: 4 lanes
 * fill SSE2's (or NEON's) 128-bit registers. lanes is a constant (the caller
 * below), so the loops unroll. The x86-64 AVX2 and AVX-512 instances are
 * separate (chacha_stream8, chacha_stream16): this layout costs a trip
 * through memory per word, as much as the rounds at those widths.
 */
#define CHACHA_MAX_LANES	4

#define XL(i, l)	x[(i) * lanes + (l)]
#define QUARTER_LANES(a, b, c, d)				\
	for (int l = 0; l < lanes; l++)				\
		QUARTER(XL(a, l), XL(b, l), XL(c, l), XL(d, l))

/*
 * 64 * lanes bytes of keystream from st (counter in words 12, 13) on, XORed
 * into n <= 64 * lanes bytes of in; x, y and ks are the caller's, so that
 * it wipes them once, not once a batch.
 */
static inline __attribute__((always_inline)) void
chacha_batch(const uint32_t st[16], uint64_t block, const uint8_t *in, uint8_t *out, size_t n,
	     uint32_t *x, uint32_t *y, uint8_t *ks, const int lanes)
{
	for (int i = 0; i < 16; i++)
		for (int l = 0; l < lanes; l++)
			y[i * lanes + l] = st[i];
	for (int l = 0; l < lanes; l++) {
		y[12 * lanes + l] = (uint32_t)(block + l);
		y[13 * lanes + l] = (uint32_t)((block + l) >> 32);
	}
	memcpy(x, y, 16 * lanes * sizeof(*x));
	for (int i = 0; i < CHACHA_ROUNDS; i += 2) {
		QUARTER_LANES(0, 4, 8, 12);
		QUARTER_LANES(1, 5, 9, 13);
		QUARTER_LANES(2, 6, 10, 14);
		QUARTER_LANES(3, 7, 11, 15);
		QUARTER_LANES(0, 5, 10, 15);
		QUARTER_LANES(1, 6, 11, 12);
		QUARTER_LANES(2, 7, 8, 13);
		QUARTER_LANES(3, 4, 9, 14);
	}
	for (int i = 0; i < 16 * lanes; i++)
		x[i] += y[i];
	/* Lane l is block + l: its 16 words make the l-th 64 bytes. */
	for (int l = 0; l < lanes; l++)
		for (int i = 0; i < 16; i++)
			put_le32(ks + 64 * l + 4 * i, XL(i, l));
	if (n == (size_t)64 * lanes) {
		/* Word by word, which in == out allows. */
		for (size_t i = 0; i < n; i += 8) {
			uint64_t a, b;

			memcpy(&a, in + i, 8);
			memcpy(&b, ks + i, 8);
			a ^= b;
			memcpy(out + i, &a, 8);
		}
	} else {
		for (size_t i = 0; i < n; i++)
			out[i] = in[i] ^ ks[i];
	}
}

#undef QUARTER_LANES
#undef XL

static inline __attribute__((always_inline)) void
chacha_stream(const uint32_t st[16], uint64_t block, const uint8_t *in, uint8_t *out, size_t len,
	      const int lanes)
{
	uint32_t x[16 * CHACHA_MAX_LANES], y[16 * CHACHA_MAX_LANES];
	uint8_t ks[64 * CHACHA_MAX_LANES];
	size_t batch = (size_t)64 * lanes;

	for (; len; block += lanes) {
		size_t n = len < batch ? len : batch;

		chacha_batch(st, block, in, out, n, x, y, ks, lanes);
		in += n;
		out += n;
		len -= n;
	}
	/* only what this width used */
	OPENSSL_cleanse(x, 16 * lanes * sizeof(x[0]));
	OPENSSL_cleanse(y, 16 * lanes * sizeof(y[0]));
	OPENSSL_cleanse(ks, (size_t)64 * lanes);
}

static void chacha_stream4(const uint32_t st[16], uint64_t block, const uint8_t *in,
			   uint8_t *out, size_t len)
{
	chacha_stream(st, block, in, out, len, 4);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define CHACHA_X86_WIDE	1

/*
 * AVX2 ChaCha12 with the state in registers, as the AVX-512 instance below
 * but 8 blocks a batch: word i of 8 consecutive blocks in one vector, the
 * rotations by 16 and 8 as byte shuffles, then an 8 x 16 transpose in
 * registers (unpacks within 128-bit halves, then 128-bit permutes). AVX2
 * has 16 registers for 16 state words, so the compiler spills some working
 * state; chacha_stream8 wipes that part of the stack when it is done.
 */
#define ROT8_256(v, sh) _mm256_shuffle_epi8(v, sh)
#define ROTL_256(v, n) _mm256_or_si256(_mm256_slli_epi32(v, n), _mm256_srli_epi32(v, 32 - (n)))
#define ROUND8(a, b, c, d) do {							\
		a = _mm256_add_epi32(a, b); d = ROT8_256(_mm256_xor_si256(d, a), r16);	\
		c = _mm256_add_epi32(c, d); b = ROTL_256(_mm256_xor_si256(b, c), 12);	\
		a = _mm256_add_epi32(a, b); d = ROT8_256(_mm256_xor_si256(d, a), r8);	\
		c = _mm256_add_epi32(c, d); b = ROTL_256(_mm256_xor_si256(b, c), 7);	\
	} while (0)

/* 8 blocks of keystream from block on, in output order: ks[j] is bytes 32j..32j+31. */
__attribute__((target("avx2"), always_inline)) static inline void
chacha_keystream8(const uint32_t st[16], uint64_t block, __m256i ks[16])
{
	const __m256i r16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
					     2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
	const __m256i r8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
					    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
	const __m256i sign = _mm256_set1_epi32(INT32_MIN);
	__m256i x[16], t[16], ctr_lo, ctr_hi, carry;
	__m256i lo0 = _mm256_set1_epi32((int)(uint32_t)block);
	__m256i hi0 = _mm256_set1_epi32((int)(uint32_t)(block >> 32));

	/* Lane l's 64-bit counter is block + l; AVX2 compares signed, hence the flips. */
	ctr_lo = _mm256_add_epi32(lo0, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	carry = _mm256_cmpgt_epi32(_mm256_xor_si256(lo0, sign), _mm256_xor_si256(ctr_lo, sign));
	ctr_hi = _mm256_sub_epi32(hi0, carry);
	_Pragma("GCC unroll 16")
	for (int i = 0; i < 16; i++)
		x[i] = _mm256_set1_epi32((int)st[i]);
	x[12] = ctr_lo;
	x[13] = ctr_hi;
	_Pragma("GCC unroll 6")
	for (int r = 0; r < CHACHA_ROUNDS; r += 2) {
		ROUND8(x[0], x[4], x[8], x[12]);
		ROUND8(x[1], x[5], x[9], x[13]);
		ROUND8(x[2], x[6], x[10], x[14]);
		ROUND8(x[3], x[7], x[11], x[15]);
		ROUND8(x[0], x[5], x[10], x[15]);
		ROUND8(x[1], x[6], x[11], x[12]);
		ROUND8(x[2], x[7], x[8], x[13]);
		ROUND8(x[3], x[4], x[9], x[14]);
	}
	_Pragma("GCC unroll 16")
	for (int i = 0; i < 16; i++)
		x[i] = _mm256_add_epi32(x[i], i == 12 ? ctr_lo : i == 13 ? ctr_hi :
					_mm256_set1_epi32((int)st[i]));
	/* 32-bit pairs: half h of t[i], t[i+1] holds words i, i+1 of blocks 4h..4h+3. */
	_Pragma("GCC unroll 8")
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm256_unpacklo_epi32(x[i], x[i + 1]);
		t[i + 1] = _mm256_unpackhi_epi32(x[i], x[i + 1]);
	}
	/* 64-bit pairs: half h of x[4g + r] is words 4g..4g+3 of block 4h + r. */
	_Pragma("GCC unroll 4")
	for (int g = 0; g < 4; g++) {
		x[4 * g + 0] = _mm256_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
		x[4 * g + 1] = _mm256_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
		x[4 * g + 2] = _mm256_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
		x[4 * g + 3] = _mm256_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
	}
	/* Block 4h + r: half h of x[r], x[4 + r], then of x[8 + r], x[12 + r]. */
	_Pragma("GCC unroll 4")
	for (int r = 0; r < 4; r++) {
		ks[2 * r] = _mm256_permute2x128_si256(x[r], x[4 + r], 0x20);
		ks[2 * r + 1] = _mm256_permute2x128_si256(x[8 + r], x[12 + r], 0x20);
		ks[8 + 2 * r] = _mm256_permute2x128_si256(x[r], x[4 + r], 0x31);
		ks[8 + 2 * r + 1] = _mm256_permute2x128_si256(x[8 + r], x[12 + r], 0x31);
	}
}
#undef ROUND8
#undef ROTL_256
#undef ROT8_256

__attribute__((target("avx2"), noinline))
static void chacha_stream8_regs(const uint32_t st[16], uint64_t block, const uint8_t *in,
				uint8_t *out, size_t len)
{
	for (; len >= 512; block += 8, in += 512, out += 512, len -= 512) {
		__m256i ks[16];

		chacha_keystream8(st, block, ks);
		_Pragma("GCC unroll 16")
		for (int j = 0; j < 16; j++)
			_mm256_storeu_si256((__m256i *)(out + 32 * j),
					    _mm256_xor_si256(ks[j], _mm256_loadu_si256(
						    (const __m256i *)(in + 32 * j))));
	}
	if (len) {
		/* Whole 32-byte pieces, then the last bytes through a small buffer. */
		__m256i ks[16];
		uint8_t last[32];
		size_t off;

		chacha_keystream8(st, block, ks);
		_Pragma("GCC unroll 16")
		for (int j = 0; j < 16; j++) {
			off = (size_t)32 * j;
			if (off + 32 <= len) {
				_mm256_storeu_si256((__m256i *)(out + off),
						    _mm256_xor_si256(ks[j], _mm256_loadu_si256(
							    (const __m256i *)(in + off))));
			} else if (off < len) {
				_mm256_storeu_si256((__m256i *)last, ks[j]);
				for (size_t i = 0; i < len - off; i++)
					out[off + i] = in[off + i] ^ last[i];
				OPENSSL_cleanse(last, sizeof(last));
			}
		}
	}
}

/*
 * Overwrite the stack below the caller's frame, where chacha_stream8_regs's
 * spills were: the same depth, and a little more.
 */
__attribute__((noinline))
static void chacha_stack_wipe(void)
{
	uint8_t area[1280];

	OPENSSL_cleanse(area, sizeof(area));
}

static void chacha_stream8(const uint32_t st[16], uint64_t block, const uint8_t *in,
			   uint8_t *out, size_t len)
{
	chacha_stream8_regs(st, block, in, out, len);
	chacha_stack_wipe();
}

/*
 * AVX-512 ChaCha12 with the state in registers: word i of 16 consecutive
 * blocks in one vector. The generic loops above compile to the same rounds,
 * but they go through memory to turn word-major vectors into block-major
 * keystream, which cost as much as the rounds; here a 16 x 16 transpose in
 * registers (4 unpack and shuffle steps) does it.
 */
#define ROUND16(a, b, c, d) do {						\
		a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 16); \
		c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 12); \
		a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 8);  \
		c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 7);  \
	} while (0)

/* 16 blocks of keystream from block on, block-major in ks[16] (64 bytes each). */
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void
chacha_keystream16(const uint32_t st[16], uint64_t block, __m512i ks[16])
{
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
					       14, 15);
	__m512i x[16], t[16], ctr_lo, ctr_hi;
	__m512i lo0 = _mm512_set1_epi32((int)(uint32_t)block);
	__m512i hi0 = _mm512_set1_epi32((int)(uint32_t)(block >> 32));

	/* The 64-bit counter of lane l is block + l: carry into word 13 per lane. */
	ctr_lo = _mm512_add_epi32(lo0, iota);
	ctr_hi = _mm512_mask_add_epi32(hi0, _mm512_cmplt_epu32_mask(ctr_lo, lo0), hi0,
				       _mm512_set1_epi32(1));
	/* The input state is broadcast again for the final sum: 16 registers saved. */
	_Pragma("GCC unroll 16")
	for (int i = 0; i < 16; i++)
		x[i] = _mm512_set1_epi32((int)st[i]);
	x[12] = ctr_lo;
	x[13] = ctr_hi;
	_Pragma("GCC unroll 6")
	for (int r = 0; r < CHACHA_ROUNDS; r += 2) {
		ROUND16(x[0], x[4], x[8], x[12]);
		ROUND16(x[1], x[5], x[9], x[13]);
		ROUND16(x[2], x[6], x[10], x[14]);
		ROUND16(x[3], x[7], x[11], x[15]);
		ROUND16(x[0], x[5], x[10], x[15]);
		ROUND16(x[1], x[6], x[11], x[12]);
		ROUND16(x[2], x[7], x[8], x[13]);
		ROUND16(x[3], x[4], x[9], x[14]);
	}
	_Pragma("GCC unroll 16")
	for (int i = 0; i < 16; i++)
		x[i] = _mm512_add_epi32(x[i], i == 12 ? ctr_lo : i == 13 ? ctr_hi :
					_mm512_set1_epi32((int)st[i]));
	/* 32-bit pairs: 128-bit lane k of t[i], t[i+1] holds words i, i+1 of blocks 4k..4k+3. */
	_Pragma("GCC unroll 8")
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(x[i], x[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(x[i], x[i + 1]);
	}
	/* 64-bit pairs: x[4g + r] lane k = words 4g..4g+3 of block 4k + r. */
	_Pragma("GCC unroll 4")
	for (int g = 0; g < 4; g++) {
		x[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
		x[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
		x[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
		x[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
	}
	/* 128-bit lanes: block 4k + r gathers lane k of x[r], x[4 + r], x[8 + r], x[12 + r]. */
	_Pragma("GCC unroll 4")
	for (int r = 0; r < 4; r++) {
		__m512i s0 = _mm512_shuffle_i32x4(x[r], x[4 + r], 0x44);
		__m512i s1 = _mm512_shuffle_i32x4(x[r], x[4 + r], 0xee);
		__m512i s2 = _mm512_shuffle_i32x4(x[8 + r], x[12 + r], 0x44);
		__m512i s3 = _mm512_shuffle_i32x4(x[8 + r], x[12 + r], 0xee);

		ks[r] = _mm512_shuffle_i32x4(s0, s2, 0x88);
		ks[4 + r] = _mm512_shuffle_i32x4(s0, s2, 0xdd);
		ks[8 + r] = _mm512_shuffle_i32x4(s1, s3, 0x88);
		ks[12 + r] = _mm512_shuffle_i32x4(s1, s3, 0xdd);
	}
}
#undef ROUND16

__attribute__((target("avx512f,avx512bw")))
static void chacha_stream16(const uint32_t st[16], uint64_t block, const uint8_t *in,
			    uint8_t *out, size_t len)
{
	/*
	 * Every index into ks[] is a constant after unrolling, so the keystream
	 * stays in registers and there is no stack copy to wipe (as in Linux's
	 * SIMD ChaCha); the portable instances above wipe theirs.
	 */
	for (; len >= 1024; block += 16, in += 1024, out += 1024, len -= 1024) {
		__m512i ks[16];

		chacha_keystream16(st, block, ks);
		_Pragma("GCC unroll 16")
		for (int b = 0; b < 16; b++)
			_mm512_storeu_si512((void *)(out + 64 * b),
					    _mm512_xor_si512(ks[b], _mm512_loadu_si512(in + 64 * b)));
	}
	if (len) {
		/* The tail: fewer than 16 blocks, bytes past len masked off. */
		__m512i ks[16];

		chacha_keystream16(st, block, ks);
		_Pragma("GCC unroll 16")
		for (int b = 0; b < 16; b++) {
			size_t off = (size_t)64 * b;
			size_t n = len > off ? (len - off < 64 ? len - off : 64) : 0;
			__mmask64 m = n == 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
			__m512i v = _mm512_maskz_loadu_epi8(m, in + off);

			_mm512_mask_storeu_epi8(out + off, m, _mm512_xor_si512(v, ks[b]));
		}
	}
}
#endif

static int simd_max = CRYPT_SIMD_AVX512;

void crypt_adiantum_simd(int max)
{
	simd_max = max;
}

static bool simd_ok(int level)
{
	if (simd_max < level)
		return false;
#ifdef CHACHA_X86_WIDE
	if (level == CRYPT_SIMD_AVX512)
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
	if (level == CRYPT_SIMD_AVX2)
		return __builtin_cpu_supports("avx2");
#endif
	return level == CRYPT_SIMD_GENERIC;
}

/* The widest instance this CPU runs (the CPU check is a load and a test). */
static void chacha_stream_best(const uint32_t st[16], uint64_t block, const uint8_t *in,
			       uint8_t *out, size_t len)
{
#ifdef CHACHA_X86_WIDE
	if (len > 512 && simd_ok(CRYPT_SIMD_AVX512))
		return chacha_stream16(st, block, in, out, len);
	if (len > 256 && simd_ok(CRYPT_SIMD_AVX2))
		return chacha_stream8(st, block, in, out, len);
#endif
	chacha_stream4(st, block, in, out, len);
}

/* "expand 32-byte k", then the key. */
static void chacha_init(uint32_t st[16], const uint8_t key[32])
{
	st[0] = 0x61707865;
	st[1] = 0x3320646e;
	st[2] = 0x79622d32;
	st[3] = 0x6b206574;
	for (int i = 0; i < 8; i++)
		st[4 + i] = get_le32(key + 4 * i);
}

void crypt_xchacha12(const uint8_t key[32], const uint8_t nonce[24], uint64_t block,
		     const uint8_t *in, uint8_t *out, size_t len)
{
	uint32_t st[16];

	/* HChaCha12: the permuted state's first and last rows are the subkey. */
	chacha_init(st, key);
	for (int i = 0; i < 4; i++)
		st[12 + i] = get_le32(nonce + 4 * i);
	chacha_permute(st);
	memcpy(&st[4], &st[0], 4 * sizeof(st[0]));
	memcpy(&st[8], &st[12], 4 * sizeof(st[0]));
	st[0] = 0x61707865;
	st[1] = 0x3320646e;
	st[2] = 0x79622d32;
	st[3] = 0x6b206574;
	/* ChaCha12 with a 64-bit block counter and the nonce's last 8 bytes. */
	st[14] = get_le32(nonce + 16);
	st[15] = get_le32(nonce + 20);
	chacha_stream_best(st, block, in, out, len);
	OPENSSL_cleanse(st, sizeof(st));
}

/* /// NH and NHPoly1305 /// */

/*
 * NH over whole 16-byte units, 4 passes whose keys are 16 bytes apart:
 * sum over units of (m0 + k0)(m2 + k2) + (m1 + k1)(m3 + k3), in 32-bit
 * additions, 64-bit products and 64-bit sums. The four passes are spelled
 * out so their sums stay in registers: 8 multiplications per 16 bytes.
 */
static void nh_units(const uint32_t *k, const uint8_t *msg, size_t len, uint64_t sums[4])
{
	uint64_t s0 = sums[0], s1 = sums[1], s2 = sums[2], s3 = sums[3];

#define NH_PAIR(a, b, ka, kb)	((uint64_t)(uint32_t)((a) + (ka)) * (uint32_t)((b) + (kb)))
	for (; len; len -= NH_UNIT, msg += NH_UNIT, k += 4) {
		uint32_t m0 = get_le32(msg), m1 = get_le32(msg + 4);
		uint32_t m2 = get_le32(msg + 8), m3 = get_le32(msg + 12);

		s0 += NH_PAIR(m0, m2, k[0], k[2]) + NH_PAIR(m1, m3, k[1], k[3]);
		s1 += NH_PAIR(m0, m2, k[4], k[6]) + NH_PAIR(m1, m3, k[5], k[7]);
		s2 += NH_PAIR(m0, m2, k[8], k[10]) + NH_PAIR(m1, m3, k[9], k[11]);
		s3 += NH_PAIR(m0, m2, k[12], k[14]) + NH_PAIR(m1, m3, k[13], k[15]);
	}
#undef NH_PAIR
	sums[0] = s0;
	sums[1] = s1;
	sums[2] = s2;
	sums[3] = s3;
}

#ifdef CHACHA_X86_WIDE
/*
 * The same sums with AVX2, two 16-byte units' worth of products per
 * multiply: lanes hold (pass 0, pass 2 | pass 1, pass 3), so each
 * _mm256_mul_epu32 makes four useful products and none is thrown away.
 */
__attribute__((target("avx2")))
static void nh_units_avx2(const uint32_t *k, const uint8_t *msg, size_t len, uint64_t sums[4])
{
	__m256i acc = _mm256_setzero_si256();
	uint64_t out[4];

	for (; len; len -= NH_UNIT, msg += NH_UNIT, k += 4) {
		__m256i m = _mm256_broadcastsi128_si256(_mm_loadu_si128((const void *)msg));
		/* a = m + k[0..7] (passes 0, 1), c = m + k[8..15] (passes 2, 3) */
		__m256i a = _mm256_add_epi32(m, _mm256_loadu_si256((const void *)k));
		__m256i c = _mm256_add_epi32(m, _mm256_loadu_si256((const void *)(k + 8)));
		/* x = (a0 a1 c0 c1 | b0 b1 d0 d1), y = (a2 a3 c2 c3 | b2 b3 d2 d3) */
		__m256i x = _mm256_unpacklo_epi64(a, c), y = _mm256_unpackhi_epi64(a, c);

		acc = _mm256_add_epi64(acc, _mm256_mul_epu32(x, y));
		acc = _mm256_add_epi64(acc, _mm256_mul_epu32(_mm256_srli_epi64(x, 32),
							     _mm256_srli_epi64(y, 32)));
	}
	_mm256_storeu_si256((void *)out, acc);
	sums[0] += out[0];
	sums[2] += out[1];
	sums[1] += out[2];
	sums[3] += out[3];
}

/*
 * AVX-512: two units a step. Lanes of a hold unit u's four passes (m + k at
 * k, k + 4, k + 8, k + 12), b unit u + 1's (its keys start 4 words on); the
 * 64-bit unpacks pair each pass's (m0, m1) with its (m2, m3), so each
 * multiply makes eight useful products. acc's 128-bit lane p sums pass p.
 */
__attribute__((target("avx512f")))
static void nh_units_avx512(const uint32_t *k, const uint8_t *msg, size_t len, uint64_t sums[4])
{
	__m512i acc = _mm512_setzero_si512();
	uint64_t out[8];

	for (; len >= 2 * NH_UNIT; len -= 2 * NH_UNIT, msg += 2 * NH_UNIT, k += 8) {
		__m512i ma = _mm512_broadcast_i32x4(_mm_loadu_si128((const void *)msg));
		__m512i mb = _mm512_broadcast_i32x4(_mm_loadu_si128((const void *)(msg + NH_UNIT)));
		__m512i a = _mm512_add_epi32(ma, _mm512_loadu_si512(k));
		__m512i b = _mm512_add_epi32(mb, _mm512_loadu_si512(k + 4));
		__m512i x = _mm512_unpacklo_epi64(a, b), y = _mm512_unpackhi_epi64(a, b);

		acc = _mm512_add_epi64(acc, _mm512_mul_epu32(x, y));
		acc = _mm512_add_epi64(acc, _mm512_mul_epu32(_mm512_srli_epi64(x, 32),
							     _mm512_srli_epi64(y, 32)));
	}
	_mm512_storeu_si512((void *)out, acc);
	for (int p = 0; p < 4; p++)
		sums[p] += out[2 * p] + out[2 * p + 1];
	if (len)
		nh_units_avx2(k, msg, len, sums);
}
#endif

static void nh_units_best(const uint32_t *k, const uint8_t *msg, size_t len, uint64_t sums[4])
{
#ifdef CHACHA_X86_WIDE
	if (simd_ok(CRYPT_SIMD_AVX512))
		return nh_units_avx512(k, msg, len, sums);
	if (simd_ok(CRYPT_SIMD_AVX2))
		return nh_units_avx2(k, msg, len, sums);
#endif
	nh_units(k, msg, len, sums);
}

/* NH of one chunk (at most 1024 bytes), its last unit zero-padded: 32 bytes. */
static void nh_chunk(const uint32_t *key, const uint8_t *msg, size_t len, uint8_t out[32])
{
	uint64_t sums[4] = { 0, 0, 0, 0 };
	size_t whole = len & ~(size_t)(NH_UNIT - 1);

	nh_units_best(key, msg, whole, sums);
	if (len > whole) {
		uint8_t unit[NH_UNIT] = { 0 };

		memcpy(unit, msg + whole, len - whole);
		nh_units(key + whole / 4, unit, NH_UNIT, sums);
	}
	for (int p = 0; p < 4; p++)
		put_le64(out + 8 * p, sums[p]);
}

/*
 * Poly1305 with s = 0 over the NH hashes of each 1024-byte chunk (Linux's
 * nhpoly1305): an ε-∆U hash, not a MAC, so OpenSSL's Poly1305 is fed a key
 * whose second half is zero. nh_key is the NH key as host-order words; mac,
 * if not NULL, is a Poly1305 context to rekey rather than make a new one.
 */
static int nhpoly1305(const uint8_t poly_r[16], const uint32_t *nh_key, EVP_MAC_CTX *mac,
		      const uint8_t *msg, size_t len, uint8_t out[16])
{
	uint8_t poly_key[32] = { 0 }, stack_buf[8 * 32] = { 0 }, *hashes = stack_buf;
	size_t chunks = (len + NH_CHUNK - 1) / NH_CHUNK;
	int err;

	if (chunks > sizeof(stack_buf) / 32) {
		hashes = malloc(chunks * 32);
		if (!hashes)
			return -ENOMEM;
	}
	for (size_t c = 0; c < chunks; c++) {
		size_t off = c * NH_CHUNK, n = len - off < NH_CHUNK ? len - off : NH_CHUNK;

		nh_chunk(nh_key, msg + off, n, hashes + 32 * c);
	}
	memcpy(poly_key, poly_r, 16);
	if (mac)
		err = crypt_poly1305_ctx(mac, poly_key, hashes, chunks * 32, out);
	else
		err = crypt_poly1305(poly_key, hashes, chunks * 32, out);
	OPENSSL_cleanse(poly_key, sizeof(poly_key));
	if (hashes != stack_buf)
		free(hashes);
	return err;
}

static void nh_key_words(uint32_t *words, const uint8_t *bytes)
{
	for (size_t i = 0; i < NH_KEY_BYTES / 4; i++)
		words[i] = get_le32(bytes + 4 * i);
}

int crypt_nhpoly1305(const uint8_t key[NHPOLY1305_KEY_SIZE], const uint8_t *msg, size_t len,
		     uint8_t out[16])
{
	uint32_t nh_key[NH_KEY_BYTES / 4];
	int err;

	nh_key_words(nh_key, key + 16);
	err = nhpoly1305(key, nh_key, NULL, msg, len, out);
	OPENSSL_cleanse(nh_key, sizeof(nh_key));
	return err;
}

/* /// Adiantum /// */

/* Layout of the derived keys in secret memory. */
#define ADI_STREAM	0				/* K_S, the user's key */
#define ADI_BLOCK	32				/* K_E, AES-256 */
#define ADI_HEADER	64				/* Poly1305 r, then 16 zero bytes */
#define ADI_NHPOLY	96				/* NHPoly1305's Poly1305 r ... */
#define ADI_NH		(ADI_NHPOLY + 16)		/* ... and NH key, host-order words */
#define ADI_SIZE	(ADI_NHPOLY + NHPOLY1305_KEY_SIZE)
/* How much XChaCha12 keystream Linux turns into K_E || K_H. */
#define ADI_DERIVED	(32 + 16 + NHPOLY1305_KEY_SIZE)

int adiantum_setup(struct wide_state **out, const uint8_t key[32])
{
	static const uint8_t nonce[24] = { 1 };
	struct wide_state *w;
	uint8_t *derived;
	int err = wide_alloc(&w, FSCRYPT_MODE_ADIANTUM, ADI_SIZE + ADI_DERIVED, ADI_BLOCK);

	if (err)
		return err;
	/* K_E || K_H = XChaCha12(K_S, nonce 1 || 0^184) over zeros. */
	memcpy(w->sec + ADI_STREAM, key, 32);
	derived = w->sec + ADI_SIZE;
	crypt_xchacha12(key, nonce, 0, derived, derived, ADI_DERIVED);
	memcpy(w->sec + ADI_BLOCK, derived, 32);
	memcpy(w->sec + ADI_HEADER, derived + 32, 16);
	memcpy(w->sec + ADI_NHPOLY, derived + 48, 16);
	/* Secret memory is page-aligned at this size, so ADI_NH is word-aligned. */
	nh_key_words((uint32_t *)(void *)(w->sec + ADI_NH), derived + 64);
	OPENSSL_cleanse(derived, ADI_DERIVED);
	*out = w;
	return 0;
}

static void le128_add(uint8_t r[16], const uint8_t a[16], const uint8_t b[16])
{
	uint64_t lo = get_le64(a) + get_le64(b);
	uint64_t hi = get_le64(a + 8) + get_le64(b + 8) + (lo < get_le64(a));

	put_le64(r, lo);
	put_le64(r + 8, hi);
}

static void le128_sub(uint8_t r[16], const uint8_t a[16], const uint8_t b[16])
{
	uint64_t lo = get_le64(a) - get_le64(b);
	uint64_t hi = get_le64(a + 8) - get_le64(b + 8) - (lo > get_le64(a));

	put_le64(r, lo);
	put_le64(r + 8, hi);
}

/* H(T, L) = Poly1305_{K_T}(bin128(|L| in bits) || T) + NHPoly1305(L), mod 2^128. */
static int adiantum_hash(struct wide_state *w, EVP_MAC_CTX *mac, const uint8_t header_hash[16],
			 const uint8_t *bulk, size_t bulk_len, uint8_t out[16])
{
	uint8_t h[16];
	int err = nhpoly1305(w->sec + ADI_NHPOLY, (const uint32_t *)(void *)(w->sec + ADI_NH),
			     mac, bulk, bulk_len, h);

	if (!err)
		le128_add(out, h, header_hash);
	return err;
}

static int adiantum_run(struct wide_state *w, EVP_MAC_CTX *mac, EVP_CIPHER_CTX *aes,
			const uint8_t iv[32], const uint8_t *in, uint8_t *out, size_t len, bool enc)
{
	uint8_t header[48] = { 0 }, hh[16], h[16], r[16], nonce[24] = { 0 };
	size_t bulk = len - 16;
	int err;

	put_le64(header, (uint64_t)bulk * 8);
	memcpy(header + 16, iv, 32);
	err = crypt_poly1305_ctx(mac, w->sec + ADI_HEADER, header, sizeof(header), hh);
	if (err)
		return err;
	/* enc: P_M = P_R + H(T, P_L); dec: C_M = C_R + H(T, C_L). */
	err = adiantum_hash(w, mac, hh, in, bulk, h);
	if (err)
		return err;
	le128_add(r, in + bulk, h);
	if (enc) {
		err = crypt_ecb_block(aes, r, r);
		if (err)
			return err;
	}
	/* The stream's nonce is C_M || 1 || 0^63 (Linux's XChaCha IV layout). */
	memcpy(nonce, r, 16);
	nonce[16] = 1;
	crypt_xchacha12(w->sec + ADI_STREAM, nonce, 0, in, out, bulk);
	if (!enc) {
		err = crypt_ecb_block(aes, r, r);
		if (err)
			return err;
	}
	/* enc: C_R = C_M - H(T, C_L); dec: P_R = P_M - H(T, P_L). */
	err = adiantum_hash(w, mac, hh, out, bulk, h);
	if (err)
		return err;
	le128_sub(out + bulk, r, h);
	OPENSSL_cleanse(r, sizeof(r));
	return 0;
}

/* One Poly1305 context per message, rekeyed for the header and both bulk hashes. */
int adiantum_crypt(struct wide_state *w, const uint8_t iv[32], const uint8_t *in,
		   uint8_t *out, size_t len, bool enc)
{
	return adiantum_crypt_units(w, iv, 0, in, out, len, 1, enc);
}

/*
 * n messages of len bytes, message i under the IV at ivs + i * iv_stride:
 * one Poly1305 and one AES context for all of them, so the pools' locks
 * are taken per batch, not per message (threads decrypting side by side
 * would otherwise trade those locks' cache lines every 4 KiB).
 */
int adiantum_crypt_units(struct wide_state *w, const uint8_t *ivs, size_t iv_stride,
			 const uint8_t *in, uint8_t *out, size_t len, size_t n, bool enc)
{
	struct crypt_pool *pool = enc ? &w->aes_enc : &w->aes_dec;
	EVP_CIPHER_CTX *aes;
	EVP_MAC_CTX *mac;
	int err = 0;

	if (len < 16)
		return -EINVAL;
	mac = wide_mac_get(w);
	aes = crypt_pool_get(pool);
	if (!mac || !aes)
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err; i++)
		err = adiantum_run(w, mac, aes, ivs + i * iv_stride, in + i * len, out + i * len,
				   len, enc);
	if (aes)
		crypt_pool_put(pool, aes);
	if (mac)
		wide_mac_put(w, mac);
	return err;
}
