// SPDX-License-Identifier: GPL-2.0
/*
 * A deferred user callchain requested in execve(), before the old program
 * is gone, must hold the old program's stack: the kernel part of the same
 * sample is the old program's too. It must not hold the new program's
 * entry point, which is what the task sees on its return to user space.
 *
 * A child execs itself with its argv in a page of a memfd mapping that no
 * one touched, written with pwrite(): execve() takes a kernel page fault
 * when it reads argv, and exceptions:page_fault_kernel, filtered on that
 * page, samples it with a deferred user callchain.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "deferred_records.h"
#include "tracepoint_id.h"

#define DE_ATTR(x)	__attribute__((x))
#define DE_NOINLINE	DE_ATTR(noinline)

#define CHILD_ARG	"--deferred-exec-child"
#define RING_PAGES	16

/* This program's text, where the old stack's return addresses point. */
static uintptr_t text_lo, text_hi;

/* The old program's last frames: the test, this function, execve(). */
static DE_NOINLINE void exec_child(char **argv)
{
	static char * const envp[] = { NULL };

	execve("/proc/self/exe", argv, envp);
	_exit(127);
}

/* The executable mapping of /proc/self/maps that holds exec_child(). */
static int find_text(void)
{
	uintptr_t fn = (uintptr_t)exec_child;
	unsigned long lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && fn >= lo && fn < hi) {
			text_lo = lo;
			text_hi = hi;
			break;
		}
	}
	fclose(f);
	return text_hi ? 0 : -1;
}

/* Return addresses of this program in a deferred record. */
static int own_frames(const struct dr_deferred *d)
{
	int n = 0;
	__u64 i;

	for (i = 1; i < d->nr; i++)
		n += d->ips[i] >= text_lo && d->ips[i] < text_hi;
	return n;
}

/* pwrite() all of BUF at OFF of FD: 0, or -1 for a short or failed write. */
static int put(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/*
 * A read-only private mapping of MEMFD, one page long, holding an argv
 * for ARGS: the pointers, then the strings. They are written with
 * pwrite(), so no one has touched the mapping: execve() takes the first
 * fault on it when it copies the strings. NULL if any step fails.
 */
static char *argv_page(int memfd, long page, const char * const args[2])
{
	size_t a0 = strlen(args[0]) + 1, a1 = strlen(args[1]) + 1;
	uintptr_t ptrs[3];
	char *map;

	if (ftruncate(memfd, page))
		return NULL;
	map = mmap(NULL, page, PROT_READ, MAP_PRIVATE, memfd, 0);
	if (map == MAP_FAILED)
		return NULL;
	ptrs[0] = (uintptr_t)map + sizeof(ptrs);
	ptrs[1] = ptrs[0] + a0;
	ptrs[2] = 0;
	if (put(memfd, ptrs, sizeof(ptrs), 0) ||
	    put(memfd, args[0], a0, sizeof(ptrs)) ||
	    put(memfd, args[1], a1, sizeof(ptrs) + a0)) {
		munmap(map, page);
		return NULL;
	}
	return map;
}

TEST(execve_keeps_the_old_stack)
{
	static const char * const args[] = { "deferred_exec", CHILD_ARG };
	struct perf_event_attr attr;
	long page = sysconf(_SC_PAGESIZE);
	size_t ring_len = (RING_PAGES + 1) * page, len, off;
	int id, memfd, fd, go[2], status, samples = 0;
	const struct perf_event_header *h;
	struct perf_event_mmap_page *pg;
	char filter[128], *argv, *buf;
	pid_t pid;

	id = tracepoint_id("exceptions/page_fault_kernel");
	if (id < 0)
		SKIP(return, "no exceptions:page_fault_kernel event in tracefs");
	attr = dr_tracepoint_attr(id);
	attr.sample_id_all = 1;
	ASSERT_EQ(0, find_text());

	memfd = memfd_create("deferred_exec", MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	argv = argv_page(memfd, page, args);
	ASSERT_NE(NULL, argv) TH_LOG("argv in a memfd mapping: %s", strerror(errno));

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		exec_child((char **)argv);
	}
	close(go[0]);

	fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (errno == EACCES || errno == EPERM)
			SKIP(return, "perf_event_open: %s (not privileged?)", strerror(errno));
		if (errno == EINVAL)
			SKIP(return, "perf_event_open: EINVAL (no defer_callchain?)");
		ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(errno));
	}
	snprintf(filter, sizeof(filter), "address >= 0x%lx && address < 0x%lx",
		 (unsigned long)argv, (unsigned long)argv + page);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter));
	pg = mmap(NULL, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, pg);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));

	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the child did not exec and exit cleanly: status %#x", status);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	buf = malloc(RING_PAGES * page);
	ASSERT_NE(NULL, buf);
	len = dr_ring_copy(pg, buf, RING_PAGES * page);

	/* Each sample's cookie is answered by a later record: the old stack. */
	for (off = 0; (h = dr_record(buf, len, off)); off += h->size) {
		const struct dr_sample *s = (const void *)h;
		const struct dr_deferred *d;
		__u64 cookie;

		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		cookie = dr_sample_cookie(s);
		if (!cookie && !samples && dr_sample_user_in_place(s))
			SKIP(return, DR_NO_UNWINDER);
		ASSERT_NE(0ULL, cookie) TH_LOG("a sample without a deferred callchain");
		samples++;
		d = dr_answer(buf, len, off + h->size, cookie);
		ASSERT_NE(NULL, d) TH_LOG("cookie %#llx: no record after the sample",
					  (unsigned long long)cookie);
		TH_LOG("cookie %#llx: %llu user ips, %d of them in this program",
		       (unsigned long long)cookie, (unsigned long long)d->nr,
		       own_frames(d));
		EXPECT_LE(2, own_frames(d))
			TH_LOG("%llu ips from %#llx: not the stack of the execve() call",
			       (unsigned long long)d->nr,
			       (unsigned long long)(d->nr ? d->ips[0] : 0));
	}
	ASSERT_EQ(len, off) TH_LOG("a record with a bad size at offset %zu", off);
	ASSERT_LE(1, samples) TH_LOG("no page_fault_kernel sample in execve() reading argv");

	free(buf);
	munmap(pg, ring_len);
	close(fd);
	close(go[1]);
	munmap(argv, page);
	close(memfd);
}

int main(int argc, char **argv)
{
	/* The program the child execs: it only has to exit. */
	if (argc > 1 && !strcmp(argv[1], CHILD_ARG))
		return 0;
	return test_harness_run(argc, argv);
}
