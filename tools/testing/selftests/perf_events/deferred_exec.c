// SPDX-License-Identifier: GPL-2.0
/*
 * A deferred user callchain requested in execve(), before the old program
 * is gone, must hold the old program's stack: the kernel part of the same
 * sample is the old program's too. It must not hold the new program's
 * entry point, which is what the task sees on its return to user space.
 *
 * A child execs itself; sched:sched_prepare_exec, which fires in execve()
 * before the old program is gone, samples it with a deferred user
 * callchain.
 */
#define _GNU_SOURCE
#include <errno.h>
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

TEST(execve_keeps_the_old_stack)
{
	static char * const argv[] = { "deferred_exec", CHILD_ARG, NULL };
	struct perf_event_attr attr;
	long page = sysconf(_SC_PAGESIZE);
	size_t ring_len = (RING_PAGES + 1) * page, len, off;
	int id, fd, go[2], status, samples = 0;
	const struct perf_event_header *h;
	struct perf_event_mmap_page *pg;
	char *buf;
	pid_t pid;

	id = dr_tracepoint_id("sched/sched_prepare_exec");
	if (id < 0)
		SKIP(return, "no sched:sched_prepare_exec event in tracefs");
	attr = dr_tracepoint_attr(id);
	attr.sample_id_all = 1;
	ASSERT_EQ(0, find_text());

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
	ASSERT_EQ(1, samples) TH_LOG("%d sched_prepare_exec samples for one execve()",
				     samples);

	free(buf);
	munmap(pg, ring_len);
	close(fd);
	close(go[1]);
}

int main(int argc, char **argv)
{
	/* The program the child execs: it only has to exit. */
	if (argc > 1 && !strcmp(argv[1], CHILD_ARG))
		return 0;
	return test_harness_run(argc, argv);
}
