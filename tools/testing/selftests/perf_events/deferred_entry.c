// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains of uprobe samples. A task that hits a uprobe
 * usually steps over the probed instruction out of line, in the XOL area,
 * and the deferred unwind runs on the way there: the callchain must still
 * start at the probed address, then name every caller.
 *
 * On arm64 a probe on one of the first instructions of a function fires
 * before the function has linked its frame record: the return address is
 * still in x30, and x29 still points at the caller's frame record. A walk
 * that only follows x29 skips the first caller. (A callchain taken in
 * place does skip it: perf adds it from the sampled x30.)
 * The probed functions are written in assembly, so that the prologues are
 * the same whatever compiler builds the test: gcc's frame push, with
 * pac-ret and with BTI, and clang's (stack first, frame record at an
 * offset). A probe on an instruction after the prologue checks that the
 * entry rule is not taken once the frame record is linked; it is the only
 * case on x86_64, whose uprobes emulate the push of the frame pointer (the
 * deferred unwind then runs after it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "deferred_records.h"
#include "tracepoint_id.h"

#if defined(__aarch64__)
#include <asm/hwcap.h>
#endif

#define FE_ATTR(x)	__attribute__((x))

#define CALLS		8	/* calls of the probed function per case */
#define MAX_IPS		64	/* in a deferred record: the test's stack is shallow */
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
void fe_pac(void);
void fe_bti(void);
void fe_clang(void);

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
"	.globl fe_pac\n"
"	.type fe_pac, %function\n"
"fe_pac:\n"
"	hint	#25\n"				/* +0: paciasp */
"	stp	x29, x30, [sp, #-16]!\n"	/* +4: x30 signed */
"	mov	x29, sp\n"
"	mov	x0, x30\n"
"	bl	fe_record\n"
"	ldp	x29, x30, [sp], #16\n"
"	hint	#29\n"				/* autiasp */
"	ret\n"
"	.size fe_pac, . - fe_pac\n"
"	.p2align 2\n"
"	.globl fe_bti\n"
"	.type fe_bti, %function\n"
"fe_bti:\n"
"	hint	#34\n"				/* +0: bti c */
"	stp	x29, x30, [sp, #-16]!\n"
"	mov	x29, sp\n"
"	mov	x0, x30\n"
"	bl	fe_record\n"
"	ldp	x29, x30, [sp], #16\n"
"	ret\n"
"	.size fe_bti, . - fe_bti\n"
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
	int fd;
	struct perf_event_mmap_page *pg;
	size_t ring_len;
	uintptr_t probed;
	char *buf;
};

FIXTURE_VARIANT(entry) {
	void (*fn)(void);
	unsigned int off;	/* of the probed instruction in fn */
};

#if defined(__aarch64__)
FIXTURE_VARIANT_ADD(entry, frame_push) { .fn = fe_plain, .off = 0 };
FIXTURE_VARIANT_ADD(entry, frame_link) { .fn = fe_plain, .off = 4 };
FIXTURE_VARIANT_ADD(entry, frame_linked) { .fn = fe_plain, .off = 8 };
FIXTURE_VARIANT_ADD(entry, paciasp) { .fn = fe_pac, .off = 0 };
FIXTURE_VARIANT_ADD(entry, signed_lr) { .fn = fe_pac, .off = 4 };
FIXTURE_VARIANT_ADD(entry, bti_c) { .fn = fe_bti, .off = 0 };
FIXTURE_VARIANT_ADD(entry, frame_store) { .fn = fe_clang, .off = 4 };
FIXTURE_VARIANT_ADD(entry, frame_add) { .fn = fe_clang, .off = 8 };
#elif defined(__x86_64__)
FIXTURE_VARIANT_ADD(entry, frame_linked) { .fn = fe_plain, .off = 4 };
#endif

FIXTURE_SETUP(entry)
{
	struct perf_event_attr attr;
	size_t rec = sizeof(struct dr_sample) + 4 * sizeof(__u64) +
		     sizeof(struct dr_deferred) + MAX_IPS * sizeof(__u64);
	char path[256], cmd[512];
	unsigned long off;
	int id;

	self->fd = -1;
	self->pg = MAP_FAILED;
	self->buf = NULL;
	self->ring_len = dr_ring_len(2 * CALLS, rec, sysconf(_SC_PAGESIZE));
	self->probed = (uintptr_t)variant->fn + variant->off;
	ASSERT_EQ(0, file_offset(self->probed, path, sizeof(path), &off));

	write_uprobe_events("-:" PROBE);	/* a probe a failed run left behind */
	snprintf(cmd, sizeof(cmd), "p:%s %s:%#lx", PROBE, path, off);
	if (write_uprobe_events(cmd))
		SKIP(return, "cannot add a uprobe: %s (no CONFIG_UPROBE_EVENTS or tracefs?)",
		     strerror(errno));
	id = tracepoint_id(PROBE);
	ASSERT_LT(0, id);
	attr = dr_tracepoint_attr(id);

	self->fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (self->fd < 0 && (errno == EACCES || errno == EPERM))
		SKIP(return, "perf_event_open: %s (not privileged?)", strerror(errno));
	if (self->fd < 0 && errno == EINVAL)
		SKIP(return, "perf_event_open: EINVAL (no defer_callchain?)");
	ASSERT_LE(0, self->fd) TH_LOG("perf_event_open: %s", strerror(errno));
	self->pg = mmap(NULL, self->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->pg);
	self->buf = malloc(self->ring_len);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(entry)
{
	if (self->pg != MAP_FAILED)
		munmap(self->pg, self->ring_len);
	if (self->fd >= 0)
		close(self->fd);
	free(self->buf);
	write_uprobe_events("-:" PROBE);
}

/*
 * Each call of the probed function gives a sample, whose cookie is answered
 * by a record that holds the probed address, then the return addresses
 * into the two callers.
 */
TEST_F(entry, callers)
{
	const struct perf_event_header *h;
	int i, samples = 0;
	size_t len, off;

#if defined(__aarch64__)
	if (variant->fn == fe_pac)
		TH_LOG("pointer authentication %s: x30 is %s after paciasp",
		       getauxval(AT_HWCAP) & HWCAP_PACA ? "on" : "off",
		       getauxval(AT_HWCAP) & HWCAP_PACA ? "signed" : "unchanged");
#endif
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < CALLS; i++)
		call_probed(variant->fn);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_DISABLE, 0));

	len = dr_ring_copy(self->pg, self->buf, self->ring_len);
	for (off = 0; (h = dr_record(self->buf, len, off)); off += h->size) {
		const struct dr_sample *s = (const void *)h;
		const struct dr_deferred *d;
		__u64 cookie;

		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		samples++;
		cookie = dr_sample_cookie(s);
		ASSERT_NE(0ULL, cookie) TH_LOG("a sample without a deferred callchain");
		d = dr_answer(self->buf, len, off + h->size, cookie);
		ASSERT_NE(NULL, d) TH_LOG("cookie %#llx: no record after the sample",
					  (unsigned long long)cookie);
		ASSERT_LE(3ULL, d->nr);
		EXPECT_EQ(self->probed, d->ips[0])
			TH_LOG("the first ip is not the probed address");
		EXPECT_EQ(fe_lr, d->ips[1])
			TH_LOG("ips[1] is not the return address into call_probed()");
		EXPECT_EQ(caller_lr, d->ips[2])
			TH_LOG("ips[2] is not the return address into the test");
	}
	EXPECT_EQ(CALLS, samples) TH_LOG("one sample per call of the probed function");
}

TEST_HARNESS_MAIN
