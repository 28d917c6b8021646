// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains of uprobe samples, against the user callchain
 * the same sample takes in place. A task that hits a uprobe usually steps
 * over the probed instruction out of line, in the XOL area, and the
 * deferred unwind runs on the way there: its callchain must still start at
 * the probed address, and then give the frames the walk in place gives.
 *
 * Two events on the probe, with and without defer_callchain, sample each
 * call. The probes sit in functions written in assembly, so that the code
 * is the same whatever compiler builds the test: in the body of a function
 * that has linked its frame record, where both walks name the caller and
 * its caller; and (arm64) on the instructions of gcc's and clang's
 * prologues before the frame record is linked, and in a leaf function
 * that never links one, where x29 is still the caller's frame record and
 * both walks go from there to the caller's caller (perf adds the caller
 * from the x30 it samples, for either walk).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/auxv.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "deferred_records.h"

#define FE_ATTR(x)	__attribute__((x))

#define CALLS		8	/* calls of the probed function per case */
#define MAX_IPS		128	/* a callchain: PERF_MAX_STACK_DEPTH and its contexts */
#define PROBE		"deferred_entry/fe"

/* Written by fe_record(): what the probed function saw in x30, stripped. */
static unsigned long fe_lr;
/* The return address into the test from call_probed(), stripped. */
static unsigned long caller_lr;

void fe_record(unsigned long lr)
{
	fe_lr = dr_strip_ra(lr);
}

void fe_plain(void);
void fe_clang(void);
void fe_leaf(void);

/*
 * Each function passes its return address to fe_record(). The probes go on
 * the instructions named in the fixture variants below.
 */
#if defined(__aarch64__)
asm ("	.text\n"
"	.p2align 2\n"
"	.globl fe_plain\n"
"	.type fe_plain, %function\n"
"fe_plain:\n"
"	stp	x29, x30, [sp, #-16]!\n"	/* +0 */
"	mov	x29, sp\n"			/* +4 */
"	mov	x0, x30\n"			/* +8: frame record linked */
"	bl	fe_record\n"
"	ldp	x29, x30, [sp], #16\n"
"	ret\n"
"	.size fe_plain, . - fe_plain\n"
"	.p2align 2\n"
"	.globl fe_clang\n"
"	.type fe_clang, %function\n"
"fe_clang:\n"
"	sub	sp, sp, #32\n"
"	stp	x29, x30, [sp, #16]\n"		/* +4 */
"	add	x29, sp, #16\n"			/* +8 */
"	mov	x0, x30\n"
"	bl	fe_record\n"
"	ldp	x29, x30, [sp, #16]\n"
"	add	sp, sp, #32\n"
"	ret\n"
"	.size fe_clang, . - fe_clang\n"
"	.p2align 2\n"
"	.globl fe_leaf\n"
"	.type fe_leaf, %function\n"
"fe_leaf:\n"
"	mov	x0, x30\n"			/* +0: no frame record, ever */
"	b	fe_record\n"
"	.size fe_leaf, . - fe_leaf\n"
);

#elif defined(__x86_64__)
asm ("	.text\n"
"	.globl fe_plain\n"
"	.type fe_plain, @function\n"
"fe_plain:\n"
"	push	%rbp\n"			/* +0 */
"	mov	%rsp, %rbp\n"			/* +1 */
"	mov	8(%rbp), %rdi\n"		/* +4: frame linked */
"	call	fe_record\n"
"	pop	%rbp\n"
"	ret\n"
"	.size fe_plain, . - fe_plain\n"
);
#endif

static FE_ATTR(noinline) void call_probed(void (*fn)(void))
{
	caller_lr = dr_strip_ra((unsigned long)__builtin_return_address(0));
	fn();
	asm volatile ("" ::: "memory");	/* no tail call: keep this frame */
}

/* Write @cmd to tracefs' uprobe_events, wherever tracefs is mounted. */
static int write_uprobe_events(const char *cmd)
{
	static const char * const paths[] = {
		"/sys/kernel/tracing/uprobe_events",
		"/sys/kernel/debug/tracing/uprobe_events",
	};
	unsigned int i;
	int fd, ret = -1;

	for (i = 0; i < ARRAY_SIZE(paths) && ret < 0; i++) {
		fd = open(paths[i], O_WRONLY | O_APPEND);
		if (fd < 0)
			continue;
		ret = write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd) ? 0 : -1;
		close(fd);
	}
	return ret;
}

/* The file and file offset of @addr, from /proc/self/maps. */
static int file_offset(uintptr_t addr, char *path, size_t size, unsigned long *off)
{
	unsigned long lo, hi, pgoff;
	char line[512], file[256];
	int ret = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &lo, &hi, &pgoff, file) != 4 ||
		    addr < lo || addr >= hi)
			continue;
		*off = addr - lo + pgoff;
		snprintf(path, size, "%s", file);
		ret = 0;
	}
	fclose(f);
	return ret;
}

FIXTURE(entry) {
	int fd, fd_in_place;
	struct perf_event_mmap_page *pg;
	size_t ring_len;
	uintptr_t probed;
	char *buf;
};

FIXTURE_VARIANT(entry) {
	void (*fn)(void);
	unsigned int off;	/* of the probed instruction in fn */
	bool linked;		/* fn's frame record is in x29 there */
};

#if defined(__aarch64__)
FIXTURE_VARIANT_ADD(entry, frame_push) { .fn = fe_plain, .off = 0 };
FIXTURE_VARIANT_ADD(entry, frame_link) { .fn = fe_plain, .off = 4 };
FIXTURE_VARIANT_ADD(entry, frame_linked) { .fn = fe_plain, .off = 8, .linked = true };
FIXTURE_VARIANT_ADD(entry, frame_store) { .fn = fe_clang, .off = 4 };
FIXTURE_VARIANT_ADD(entry, frame_add) { .fn = fe_clang, .off = 8 };
FIXTURE_VARIANT_ADD(entry, leaf) { .fn = fe_leaf, .off = 0 };
#elif defined(__x86_64__)
FIXTURE_VARIANT_ADD(entry, frame_linked) { .fn = fe_plain, .off = 4, .linked = true };
#endif

FIXTURE_SETUP(entry)
{
	struct perf_event_attr attr;
	size_t rec = 2 * sizeof(struct dr_sample) + (4 + MAX_IPS) * sizeof(__u64) +
		     sizeof(struct dr_deferred) + MAX_IPS * sizeof(__u64);
	char path[256], cmd[512];
	unsigned long off;
	int id;

	self->fd = -1;
	self->fd_in_place = -1;
	self->pg = MAP_FAILED;
	self->buf = NULL;
	self->ring_len = dr_ring_len(CALLS, rec, sysconf(_SC_PAGESIZE));
	self->probed = (uintptr_t)variant->fn + variant->off;
	ASSERT_EQ(0, file_offset(self->probed, path, sizeof(path), &off));

	write_uprobe_events("-:" PROBE);	/* a probe a failed run left behind */
	snprintf(cmd, sizeof(cmd), "p:%s %s:%#lx", PROBE, path, off);
	if (write_uprobe_events(cmd))
		SKIP(return, "cannot add a uprobe: %s (no CONFIG_UPROBE_EVENTS or tracefs?)",
		     strerror(errno));
	id = dr_tracepoint_id(PROBE);
	ASSERT_LT(0, id);
	attr = dr_tracepoint_attr(id);

	self->fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (self->fd < 0 && (errno == EACCES || errno == EPERM))
		SKIP(return, "perf_event_open: %s (not privileged?)", strerror(errno));
	if (self->fd < 0 && errno == EINVAL)
		SKIP(return, "perf_event_open: EINVAL (no defer_callchain?)");
	ASSERT_LE(0, self->fd) TH_LOG("perf_event_open: %s", strerror(errno));
	attr.defer_callchain = 0;
	attr.defer_output = 0;
	self->fd_in_place = syscall(__NR_perf_event_open, &attr, 0, -1, -1,
				    PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, self->fd_in_place) TH_LOG("perf_event_open: %s", strerror(errno));
	self->pg = mmap(NULL, self->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->pg);
	ASSERT_EQ(0, ioctl(self->fd_in_place, PERF_EVENT_IOC_SET_OUTPUT, self->fd));
	self->buf = malloc(self->ring_len);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(entry)
{
	if (self->pg != MAP_FAILED)
		munmap(self->pg, self->ring_len);
	if (self->fd_in_place >= 0)
		close(self->fd_in_place);
	if (self->fd >= 0)
		close(self->fd);
	free(self->buf);
	write_uprobe_events("-:" PROBE);
}

/*
 * The return addresses of the frame records from the caller's frame up,
 * stripped, as the kernel's frame pointer walk reads them: at most @max,
 * how many. Only on arm64, where the outermost frame record (glibc's
 * _start) holds a zero frame pointer; on x86 glibc keeps no frame records
 * and the last saved frame pointer leads anywhere.
 */
#if defined(__aarch64__)
static FE_ATTR(noinline) int frame_records(unsigned long *ra, int max)
{
	/* This function's frame record holds the caller's frame pointer. */
	unsigned long *fp = *(unsigned long **)__builtin_frame_address(0);
	int n = 0;

	while (fp && n < max) {
		ra[n++] = dr_strip_ra(fp[1]);
		if ((unsigned long *)fp[0] <= fp)
			break;
		fp = (unsigned long *)fp[0];
	}
	return n;
}
#endif

/*
 * Each call of the probed function gives two samples: the one with
 * defer_callchain has a cookie, answered by a record after it; the other
 * one has its user callchain in place. Both start at the probed address
 * and give the same frames after it: the return address into
 * call_probed() and then the one into the test where fn's frame record is
 * linked, the one into the test alone where it is not. On arm64 the
 * deferred walk goes on to the outermost frame record, return address for
 * return address, as the test reads its own frame records.
 *
 * The two walks go on alike, except that one of them may stop before the
 * other: the walk in place cannot fault, and stops at a frame record it
 * cannot read without faulting (arm64 without hardware access flags: the
 * child the harness forks gets "old" entries for its parent's stack
 * pages); and on x86 perf_callchain_user() follows the frame pointer as
 * long as it points into user space, past the outermost frame record,
 * where the generic unwinder stops as the next frame does not lie above
 * the last. The shorter one must be the start of the longer one.
 */
TEST_F(entry, callers)
{
	static const char * const walk[2] = { "deferred", "in place" };
	__u64 nr[2], k, n = variant->linked ? 3 : 2;
	int i, deferred = 0, in_place = 0, pairs = 0, shorter = 0;
	const struct perf_event_header *h;
	const __u64 *ips[2] = { NULL, NULL };
	unsigned long want[3];
	size_t len, off;
#if defined(__aarch64__)
	unsigned long ra[MAX_IPS];
	int records = frame_records(ra, MAX_IPS);
#endif

	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, ioctl(self->fd_in_place, PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < CALLS; i++)
		call_probed(variant->fn);
	ASSERT_EQ(0, ioctl(self->fd_in_place, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_DISABLE, 0));
	want[0] = self->probed;
	want[1] = variant->linked ? fe_lr : caller_lr;
	want[2] = caller_lr;

	len = dr_ring_copy(self->pg, self->buf, self->ring_len);
	for (off = 0; (h = dr_record(self->buf, len, off)); off += h->size) {
		const struct dr_sample *s = (const void *)h;
		const struct dr_deferred *d;
		__u64 cookie;
		int w;

		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		cookie = dr_sample_cookie(s);
		w = !cookie;
		if (cookie) {
			deferred++;
			d = dr_answer(self->buf, len, off + h->size, cookie);
			ASSERT_NE(NULL, d) TH_LOG("cookie %#llx: no record after the sample",
						  (unsigned long long)cookie);
			ips[0] = d->ips;
			nr[0] = d->nr;
#if defined(__aarch64__)
			EXPECT_EQ(n + records, nr[0]);
			for (k = n; k < nr[0] && k < n + records; k++)
				EXPECT_EQ(ra[k - n], ips[0][k])
					TH_LOG("deferred: ips[%llu] is %#llx, in the frame %#lx",
					       (unsigned long long)k,
					       (unsigned long long)ips[0][k], ra[k - n]);
#endif
		} else {
			in_place++;
			nr[1] = dr_user_part(s->ips, s->nr, &ips[1]);
		}
		ASSERT_LE(n, nr[w]) TH_LOG("%s: %llu user ips", walk[w],
					   (unsigned long long)nr[w]);
		for (k = 0; k < n; k++)
			EXPECT_EQ(want[k], ips[w][k])
				TH_LOG("%s: ips[%llu] is %#llx, expected %#lx", walk[w],
				       (unsigned long long)k,
				       (unsigned long long)ips[w][k], want[k]);
		if (!ips[!w])
			continue;
		/* The other sample of the same call came just before. */
		pairs++;
		shorter += nr[1] < nr[0];
		for (k = 0; k < nr[0] && k < nr[1]; k++)
			EXPECT_EQ(ips[0][k], ips[1][k])
				TH_LOG("ips[%llu]: deferred %#llx, in place %#llx",
				       (unsigned long long)k,
				       (unsigned long long)ips[0][k],
				       (unsigned long long)ips[1][k]);
		ips[0] = NULL;
		ips[1] = NULL;
	}
	if (!deferred)
		SKIP(return, DR_NO_UNWINDER);
	EXPECT_EQ(CALLS, deferred) TH_LOG("one deferred sample per call");
	EXPECT_EQ(CALLS, in_place) TH_LOG("one sample in place per call");
	EXPECT_EQ(CALLS, pairs) TH_LOG("the two samples of a call side by side");
	TH_LOG("%d calls: deferred %llu frames, in place %llu; in place shorter in %d",
	       pairs, (unsigned long long)nr[0], (unsigned long long)nr[1], shorter);
#if defined(__aarch64__)
	TH_LOG("pac-ret: %s", getauxval(AT_HWCAP) & HWCAP_PACA ?
	       "the saved return addresses are signed, both walks strip them" :
	       "no pointer authentication on this CPU, nothing to strip");
#endif
}

TEST_HARNESS_MAIN
