/* mock_common.h - what the mock cuBLAS and cuDNN share (each is built alone
 * as a shared object and includes this): a call log, and float32 / float16 /
 * bfloat16 elements read and written as doubles (round to nearest even). */
#ifndef PASSFS_MOCK_COMMON_H
#define PASSFS_MOCK_COMMON_H

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock_env.h"

enum mock_elem { MOCK_F32, MOCK_F16, MOCK_BF16 };

/* Appends one formatted line to the file named by the environment
 * variable `env` (nothing when unset). */
static void mock_log(const char *env, const char *fmt, va_list ap)
{
	const char *path = getenv(env);
	if (path == NULL || *path == 0)
		return;
	char line[512];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)!write(fd, line, (size_t)n);
		close(fd);
	}
}

static float f32_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static float half_to_float(uint16_t h)
{
	int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v;
	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 0x400), e - 25);
	return s ? -v : v;
}

static uint16_t float_to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
	x &= 0x7fffffff;
	if (x > 0x7f800000)
		return sign | 0x7e00;
	if (x >= 0x477ff000)            /* 65520 and above round to infinity */
		return sign | 0x7c00;
	if (x < 0x38800000)             /* below 2^-14: a subnormal (or zero) half */
		return sign | (uint16_t)nearbyintf(f32_bits(x) * 16777216.0f);
	uint32_t mant = x & 0x7fffff, e = (x >> 23) - 127 + 15;
	uint32_t h = (e << 10) | (mant >> 13), rem = mant & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return sign | (uint16_t)h;
}

static uint16_t float_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

static double mock_load(const void *base, enum mock_elem t, long long i)
{
	if (t == MOCK_F32)
		return ((const float *)base)[i];
	uint16_t h = ((const uint16_t *)base)[i];
	return t == MOCK_F16 ? half_to_float(h) : f32_bits((uint32_t)h << 16);
}

static void mock_store(void *base, enum mock_elem t, long long i, double v)
{
	if (t == MOCK_F32)
		((float *)base)[i] = (float)v;
	else if (t == MOCK_F16)
		((uint16_t *)base)[i] = float_to_half((float)v);
	else
		((uint16_t *)base)[i] = float_to_bf16((float)v);
}

#endif
