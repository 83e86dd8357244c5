// SPDX-License-Identifier: GPL-2.0
/*
 * sd_idabench: the kernel's index allocators timed inside the kernel that
 * runs them, the way `sdswarm-bench numbering` times libsdnum's: for each
 * size N, fill a fresh allocator to N (ns per allocation), then churn at full
 * occupancy (free a pseudo-random id, allocate it back: ns per pair). Twice:
 * the ida (mainline sd's sd_index_ida) and 2.6's flat bitmap scanned from
 * bit 0 (find_first_zero_bit). One dmesg line a size:
 *
 *   sd_idabench: n=N ida_fill_ns=F ida_churn_ns=C bitmap_fill_ns=F|- bitmap_churn_ns=C
 *
 * with one decimal. The bitmap's fill costs N^2/128 word reads; past
 * bitmap_fill_max it is left out ("-"). All work happens at load; the
 * module then stays loaded, doing nothing, until it is removed.
 */
#include <linux/bitmap.h>
#include <linux/idr.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>

static unsigned int sizes[16] = {256, 4096, 65536, 262144, 1048576};
static int nsizes = 5;
module_param_array(sizes, uint, &nsizes, 0444);
MODULE_PARM_DESC(
	sizes,
	"sizes N, comma separated (default 256,4096,65536,262144,1048576)");
static unsigned int churn = 4096;
module_param(churn, uint, 0444);
MODULE_PARM_DESC(churn, "free+alloc pairs a churn measurement (default 4096)");
static unsigned int bitmap_fill_max = 65536;
module_param(bitmap_fill_max, uint, 0444);
MODULE_PARM_DESC(bitmap_fill_max,
		 "largest N the bitmap is filled at (default 65536)");

#define IB_MAX_N (1u << 20)

/* xorshift32, a fixed seed: every run frees the same ids. */
static u32 ib_rand(u32 *s)
{
	u32 x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

/* Tenths of a nanosecond per operation, printed as "%llu.%llu". */
static u64 ib_tenths(u64 ns, u64 ops)
{
	return ops ? div64_u64(ns * 10, ops) : 0;
}

static int ib_ida(unsigned int n, u64 *fill, u64 *pairs)
{
	DEFINE_IDA(ida);
	unsigned int i;
	u32 seed = 2463534242u;
	u64 t0;
	int id, ret = 0;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		id = ida_alloc(&ida, GFP_KERNEL);
		/* Lowest free first: a fresh ida hands out 0, 1, 2... */
		if (id != i) {
			ret = id < 0 ? id : -EPROTO;
			goto out;
		}
		if (!(i & 4095))
			cond_resched();
	}
	*fill = ktime_get_ns() - t0;
	t0 = ktime_get_ns();
	for (i = 0; i < churn; i++) {
		unsigned int want = ib_rand(&seed) % n;

		ida_free(&ida, want);
		id = ida_alloc(&ida, GFP_KERNEL);
		if (id != want) {
			ret = id < 0 ? id : -EPROTO;
			goto out;
		}
	}
	*pairs = ktime_get_ns() - t0;
out:
	ida_destroy(&ida);
	return ret;
}

static int ib_bitmap(unsigned long *bits, unsigned int n, u64 *fill, u64 *pairs)
{
	unsigned long bit;
	unsigned int i;
	u32 seed = 2463534242u;
	u64 t0;

	bitmap_zero(bits, n);
	*fill = 0;
	if (n <= bitmap_fill_max) {
		t0 = ktime_get_ns();
		for (i = 0; i < n; i++) {
			/* The 2.6 sd_probe: the first zero from bit 0. */
			bit = find_first_zero_bit(bits, n);
			if (bit != i)
				return -EPROTO;
			__set_bit(bit, bits);
			if (!(i & 4095))
				cond_resched();
		}
		*fill = ktime_get_ns() - t0;
	} else {
		bitmap_fill(bits, n);
	}
	t0 = ktime_get_ns();
	for (i = 0; i < churn; i++) {
		unsigned int want = ib_rand(&seed) % n;

		__clear_bit(want, bits);
		bit = find_first_zero_bit(bits, n);
		if (bit != want)
			return -EPROTO;
		__set_bit(bit, bits);
	}
	*pairs = ktime_get_ns() - t0;
	return 0;
}

static int __init ib_init(void)
{
	unsigned long *bits;
	u64 f_ida, c_ida, f_bm, c_bm;
	char fbuf[32];
	int i, ret = 0;

	if (!churn) {
		pr_err("sd_idabench: churn=0: nothing to measure\n");
		return -EINVAL;
	}
	for (i = 0; i < nsizes; i++) {
		if (sizes[i] < 1 || sizes[i] > IB_MAX_N) {
			pr_err("sd_idabench: sizes: %u is not in 1..%u\n",
			       sizes[i], IB_MAX_N);
			return -EINVAL;
		}
	}
	bits = kvcalloc(BITS_TO_LONGS(IB_MAX_N), sizeof(long), GFP_KERNEL);
	if (!bits)
		return -ENOMEM;
	for (i = 0; i < nsizes && !ret; i++) {
		unsigned int n = sizes[i];

		ret = ib_ida(n, &f_ida, &c_ida);
		if (!ret)
			ret = ib_bitmap(bits, n, &f_bm, &c_bm);
		if (ret) {
			pr_err("sd_idabench: n=%u: %s (%d)\n", n,
			       ret == -EPROTO ? "not lowest-free first"
					      : "allocation failed",
			       ret);
			break;
		}
		if (n <= bitmap_fill_max)
			snprintf(fbuf, sizeof(fbuf), "%llu.%llu",
				 ib_tenths(f_bm, n) / 10,
				 ib_tenths(f_bm, n) % 10);
		else
			strscpy(fbuf, "-", sizeof(fbuf));
		pr_info("sd_idabench: n=%u ida_fill_ns=%llu.%llu ida_churn_ns=%llu.%llu bitmap_fill_ns=%s bitmap_churn_ns=%llu.%llu\n",
			n, ib_tenths(f_ida, n) / 10, ib_tenths(f_ida, n) % 10,
			ib_tenths(c_ida, churn) / 10,
			ib_tenths(c_ida, churn) % 10, fbuf,
			ib_tenths(c_bm, churn) / 10,
			ib_tenths(c_bm, churn) % 10);
	}
	kvfree(bits);
	return ret;
}

static void __exit ib_exit(void)
{
}

module_init(ib_init);
module_exit(ib_exit);
MODULE_DESCRIPTION(
	"sdswarm: ida and 2.6 bitmap index allocators timed in the kernel");
MODULE_LICENSE("GPL");
