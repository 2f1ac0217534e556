// SPDX-License-Identifier: GPL-2.0
/*
 * Decoder for the LZO1X bitstream in the dialect Linux reads, which adds a
 * run-length encoding of zeros ("lzo-rle", bitstream version 1) that
 * liblzo2 does not know. f2fs clusters compressed with lzo-rle need it.
 *
 * Written from the format description in the kernel's
 * Documentation/staging/lzo.rst; tested against liblzo2 on plain streams
 * and against clusters Linux compressed with lzo-rle. Where liblzo2 and
 * Linux differ, this follows Linux: the end marker must be the exact
 * three-byte form and no input may follow it.
 *
 * The stream is a sequence of instructions; each is decoded into a small
 * struct (literal run, back-reference, zero run or end marker) and then
 * executed, so every input read and output write is checked in exactly one
 * place. Any malformed stream yields -EIO.
 *
 * The decoder keeps the one piece of state the format needs: how many
 * literals the previous instruction copied (0, 1..3, or "4 or more"),
 * because opcodes 0..15 mean different things after each.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lzo_rle.h"

#define VERSION_MARKER		17	/* first byte of a versioned stream */
#define MIN_VERSIONED_LEN	5	/* marker, version, shortest body */
#define FIRST_LIT_BIAS		17	/* first byte > 17: a literal run of byte - 17 */
#define STATE_LONG_RUN		4	/* previous instruction copied >= 4 literals */
#define NEAR_BIAS		1	/* every back-reference is at least 1 back */
#define M1_FAR_BIAS		0x801	/* 3-byte copy after a long run: 2049 back and more */
#define M4_BIAS			0x4000	/* opcodes 16..31 reach 16 KiB and more back */
#define ZERO_RUN_MIN		4
#define ZERO_RUN_DIST_BITS	0xfffcu	/* distance field of a zero run, minus the state bits */
#define MAX_ZERO_BYTES		((SIZE_MAX / 255) - 2)	/* keeps length sums from wrapping */

enum insn_kind {
	INSN_LITERALS,	/* copy len bytes from the input */
	INSN_MATCH,	/* copy len bytes from dist back in the output */
	INSN_ZEROS,	/* write len zero bytes (version 1 only) */
	INSN_END,
};

struct lzo_insn {
	enum insn_kind kind;
	size_t len;
	size_t dist;
	unsigned int trail;	/* literals that follow a match or zero run */
};

struct lzo_stream {
	const uint8_t *ip, *ip_end;
	uint8_t *out, *op, *op_end;
	bool rle;
};

static bool in_avail(const struct lzo_stream *s, size_t n)
{
	return (size_t)(s->ip_end - s->ip) >= n;
}

static bool out_avail(const struct lzo_stream *s, size_t n)
{
	return (size_t)(s->op_end - s->op) >= n;
}

static int get_byte(struct lzo_stream *s, size_t *v)
{
	if (!in_avail(s, 1))
		return -EIO;
	*v = *s->ip++;
	return 0;
}

static int peek_le16(const struct lzo_stream *s, size_t *v)
{
	if (!in_avail(s, 2))
		return -EIO;
	*v = (size_t)s->ip[0] | ((size_t)s->ip[1] << 8);
	return 0;
}

static int get_le16(struct lzo_stream *s, size_t *v)
{
	int err = peek_le16(s, v);

	if (!err)
		s->ip += 2;
	return err;
}

/*
 * A length whose opcode bits are all zero continues in the following bytes:
 * each zero byte adds 255 and the first non-zero byte ends the field.
 * base is the largest value the opcode bits could have held.
 */
static int get_long_len(struct lzo_stream *s, size_t base, size_t *len)
{
	size_t zeros = 0, last;

	for (;;) {
		if (get_byte(s, &last))
			return -EIO;
		if (last)
			break;
		if (++zeros > MAX_ZERO_BYTES)
			return -EIO;
	}
	*len = zeros * 255 + base + last;
	return 0;
}

static int copy_literals(struct lzo_stream *s, size_t n)
{
	if (!in_avail(s, n) || !out_avail(s, n))
		return -EIO;
	memcpy(s->op, s->ip, n);
	s->op += n;
	s->ip += n;
	return 0;
}

/* Source and destination may overlap: that is how LZ77 repeats a pattern. */
static int copy_match(struct lzo_stream *s, size_t dist, size_t len)
{
	const uint8_t *from;

	if (dist == 0 || dist > (size_t)(s->op - s->out) || !out_avail(s, len))
		return -EIO;
	from = s->op - dist;
	while (len--)
		*s->op++ = *from++;
	return 0;
}

static int fill_zeros(struct lzo_stream *s, size_t n)
{
	if (!out_avail(s, n))
		return -EIO;
	memset(s->op, 0, n);
	s->op += n;
	return 0;
}

/* Opcodes 0..15: their meaning depends on the literals copied just before. */
static int decode_low(struct lzo_stream *s, size_t op, unsigned int state,
		      struct lzo_insn *in)
{
	size_t h;

	if (state == 0) {
		in->kind = INSN_LITERALS;
		if (op)
			in->len = op + 3;
		else if (get_long_len(s, 15 + 3, &in->len))
			return -EIO;
		return 0;
	}
	if (get_byte(s, &h))
		return -EIO;
	in->kind = INSN_MATCH;
	in->trail = op & 3;
	if (state < STATE_LONG_RUN) {
		in->len = 2;
		in->dist = NEAR_BIAS + (op >> 2) + (h << 2);
	} else {
		in->len = 3;
		in->dist = M1_FAR_BIAS + (op >> 2) + (h << 2);
	}
	return 0;
}

/* Opcodes 32..63: a copy from up to 16 KiB back with a 5-bit length. */
static int decode_mid(struct lzo_stream *s, size_t op, struct lzo_insn *in)
{
	size_t d;

	in->kind = INSN_MATCH;
	if (op & 31)
		in->len = (op & 31) + 2;
	else if (get_long_len(s, 31 + 2, &in->len))
		return -EIO;
	if (get_le16(s, &d))
		return -EIO;
	in->dist = NEAR_BIAS + (d >> 2);
	in->trail = d & 3;
	return 0;
}

/*
 * Opcodes 16..31: a far copy (16..48 KiB back), the end marker (distance
 * zero), or in version 1 a zero run, recognised by its distance bits being
 * all ones before any length extension is read.
 */
static int decode_far(struct lzo_stream *s, size_t op, struct lzo_insn *in)
{
	size_t d, x, far;

	if (peek_le16(s, &d))
		return -EIO;
	if (s->rle && (op & 0xf8) == 0x18 && (d & ZERO_RUN_DIST_BITS) == ZERO_RUN_DIST_BITS) {
		if (!in_avail(s, 3))
			return -EIO;
		x = s->ip[2];
		s->ip += 3;
		in->kind = INSN_ZEROS;
		in->len = ((op & 7) | (x << 3)) + ZERO_RUN_MIN;
		in->trail = d & 3;
		return 0;
	}

	if (op & 7)
		in->len = (op & 7) + 2;
	else if (get_long_len(s, 7 + 2, &in->len))
		return -EIO;
	if (get_le16(s, &d))
		return -EIO;
	far = ((op & 8) << 11) + (d >> 2);
	if (far == 0) {
		/* Only the plain three-byte form (opcode 17) ends a stream. */
		in->kind = INSN_END;
		return in->len == 3 ? 0 : -EIO;
	}
	in->kind = INSN_MATCH;
	in->dist = far + M4_BIAS;
	in->trail = d & 3;
	return 0;
}

static int decode_insn(struct lzo_stream *s, unsigned int state, struct lzo_insn *in)
{
	size_t op;

	if (get_byte(s, &op))
		return -EIO;
	if (op < 16)
		return decode_low(s, op, state, in);
	if (op < 32)
		return decode_far(s, op, in);
	if (op < 64)
		return decode_mid(s, op, in);
	/* Opcodes 64..255: 3..8 bytes from up to 2 KiB back, one extra byte. */
	in->kind = INSN_MATCH;
	in->len = (op >> 5) + 1;
	in->trail = op & 3;
	if (get_byte(s, &in->dist))
		return -EIO;
	in->dist = NEAR_BIAS + ((op >> 2) & 7) + (in->dist << 3);
	return 0;
}

/*
 * The first instruction may be a literal run encoded as 17 + length, since
 * nothing can be copied from an empty output yet. Returns the new state.
 */
static int decode_first(struct lzo_stream *s, unsigned int *state)
{
	size_t n;

	*state = 0;
	if (!in_avail(s, 1) || *s->ip <= FIRST_LIT_BIAS)
		return 0;
	n = *s->ip++ - FIRST_LIT_BIAS;
	*state = n < STATE_LONG_RUN ? (unsigned int)n : STATE_LONG_RUN;
	return copy_literals(s, n);
}

static int run(struct lzo_stream *s)
{
	struct lzo_insn in;
	unsigned int state;

	if (decode_first(s, &state))
		return -EIO;
	for (;;) {
		if (decode_insn(s, state, &in))
			return -EIO;
		switch (in.kind) {
		case INSN_END:
			/* Trailing garbage means the length field lied: reject it. */
			return s->ip == s->ip_end ? 0 : -EIO;
		case INSN_LITERALS:
			if (copy_literals(s, in.len))
				return -EIO;
			state = STATE_LONG_RUN;
			continue;
		case INSN_MATCH:
			if (copy_match(s, in.dist, in.len))
				return -EIO;
			break;
		case INSN_ZEROS:
			if (fill_zeros(s, in.len))
				return -EIO;
			break;
		}
		if (copy_literals(s, in.trail))
			return -EIO;
		state = in.trail;
	}
}

int uf2fs_lzo_rle_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t *out_len)
{
	struct lzo_stream s;
	int err;

	/* The shortest stream is the bare end marker. */
	if (!in || !out || in_len < 3)
		return -EIO;
	s = (struct lzo_stream){
		.ip = in, .ip_end = in + in_len,
		.out = out, .op = out, .op_end = out + *out_len,
	};
	if (in_len >= MIN_VERSIONED_LEN && in[0] == VERSION_MARKER) {
		s.rle = in[1] != 0;
		s.ip += 2;
	}
	err = run(&s);
	if (!err)
		*out_len = (size_t)(s.op - s.out);
	return err;
}
