// SPDX-License-Identifier: GPL-2.0
/*
 * An AArch32 task keeps its user callchain under defer_callchain. The
 * deferred unwinder cannot walk AArch32 frames, so the kernel must not
 * defer for such a task: the sample gets its user stack in place, the
 * same one an event without defer_callchain gets, and no sample carries
 * the deferred marker.
 *
 * deferred_compat_child, an AArch32 program built beside this test,
 * prints the return addresses of its chain main() -> level1() -> level2()
 * -> level3() and spins in level3(). Two task-clock events sample it,
 * with and without defer_callchain; most of either's samples must show
 * those three return addresses right after the sampled pc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
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

#define CHILD		"deferred_compat_child"
#define CHILD_MS	400		/* user time the child spins */
#define PERIOD_NS	2000000ULL	/* one sample per 2 ms of it */
#define MAX_STACK	16

struct event {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t len;
};

/* A ring for every sample (and record) the child's user time gives, and slack. */
static size_t ring_len(long page)
{
	size_t rec = sizeof(struct dr_sample) + (MAX_STACK + 2) * sizeof(__u64);

	return dr_ring_len(CHILD_MS * 1000000ULL / PERIOD_NS + 64, rec, page);
}

static int open_event(struct event *ev, pid_t pid, int defer, long page)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.size = sizeof(attr),
		.sample_period = PERIOD_NS,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.sample_max_stack = MAX_STACK,
		.exclude_callchain_kernel = 1,
		/*
		 * User-mode samples only: the share of the child's time spent
		 * in the kernel (exec, faults, and clock reads where there is
		 * no compat vDSO) depends on the machine and the kernel's
		 * debug options, its user time is all but level3()'s loop.
		 */
		.exclude_kernel = 1,
		.disabled = 1,
		.enable_on_exec = 1,
		.defer_callchain = defer,
		.defer_output = defer,
	};

	ev->fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0)
		return -errno;
	ev->len = ring_len(page);
	ev->pg = mmap(NULL, ev->len, PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, 0);
	return ev->pg == MAP_FAILED ? -errno : 0;
}

/*
 * What an event recorded: samples, those with the child's three return
 * addresses right after the pc, samples with a deferred marker and the
 * kernel entries (cookies) they were in, deferred records and those
 * without a single entry, losses.
 */
struct tally {
	int samples, chains, markers, entries, deferred, empty, lost;
	__u64 cookie;
};

static void count(const struct event *ev, const unsigned long ra[3], struct tally *t)
{
	size_t size = ev->len - (size_t)sysconf(_SC_PAGESIZE), len, off;
	const struct perf_event_header *h;
	char *buf = malloc(size);

	memset(t, 0, sizeof(*t));
	if (!buf)
		return;
	len = dr_ring_copy(ev->pg, buf, size);
	for (off = 0; (h = dr_record(buf, len, off)); off += h->size) {
		const struct dr_sample *s = (const void *)h;

		t->lost += h->type == PERF_RECORD_LOST;
		if (h->type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			t->deferred++;
			t->empty += !((const struct dr_deferred *)h)->nr;
		}
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		t->samples++;
		if (dr_sample_cookie(s)) {
			t->markers++;
			t->entries += dr_sample_cookie(s) != t->cookie;
			t->cookie = dr_sample_cookie(s);
		}
		/* PERF_CONTEXT_USER, the pc, then the return addresses */
		if (s->nr >= 5 && s->ips[0] == PERF_CONTEXT_USER &&
		    s->ips[2] == ra[0] && s->ips[3] == ra[1] && s->ips[4] == ra[2])
			t->chains++;
	}
	free(buf);
}

/* The helper's path, beside this program. */
static int child_path(char *path, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		return -1;
	self[n] = 0;
	snprintf(path, size, "%s/%s", dirname(self), CHILD);
	return access(path, X_OK);
}

TEST(aarch32_keeps_its_user_callchain)
{
	long page = sysconf(_SC_PAGESIZE);
	int go[2], out[2], err[2], status, exec_errno = 0, i, ret;
	char path[PATH_MAX], arg[16], line[128];
	unsigned long ra[3];
	static const char * const name[] = { "in place", "defer_callchain" };
	struct event ev[2];	/* [0] in place, [1] defer_callchain */
	struct tally t[2];
	FILE *f;
	pid_t pid;

	if (child_path(path, sizeof(path)))
		SKIP(return, "no %s beside this test: no AArch32 C compiler at build time (%s)",
		     CHILD, "CROSS_COMPILE_COMPAT; Debian: gcc-arm-linux-gnueabihf");
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(out));
	ASSERT_EQ(0, pipe2(err, O_CLOEXEC));
	snprintf(arg, sizeof(arg), "%d", CHILD_MS);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;

		dup2(out[1], 1);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execl(path, CHILD, arg, (char *)NULL);
		exec_errno = errno;
		if (write(err[1], &exec_errno, sizeof(exec_errno)) < 0)
			_exit(125);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	for (i = 0; i < 2; i++) {
		ret = open_event(&ev[i], pid, i, page);
		if (ret) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			if (ret == -EACCES || ret == -EPERM)
				SKIP(return, "perf_event_open: %s (not privileged?)",
				     strerror(-ret));
			if (ret == -EINVAL && i)
				SKIP(return, "perf_event_open: EINVAL (no defer_callchain?)");
			ASSERT_EQ(0, ret) TH_LOG("event %d: %s", i, strerror(-ret));
		}
	}

	ASSERT_EQ(1, write(go[1], "x", 1));
	if (read(err[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno)) {
		waitpid(pid, NULL, 0);
		if (exec_errno == ENOEXEC)
			SKIP(return, "execve(%s): ENOEXEC: no AArch32 at EL0 or no CONFIG_COMPAT",
			     CHILD);
		ASSERT_EQ(0, exec_errno) TH_LOG("execve(%s): %s", path, strerror(exec_errno));
	}
	f = fdopen(out[0], "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	ret = sscanf(line, "%lx %lx %lx", &ra[0], &ra[1], &ra[2]);
	ASSERT_EQ(3, ret) TH_LOG("the child printed '%s'", line);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child did not exit cleanly: status %#x", status);
	fclose(f);

	for (i = 0; i < 2; i++) {
		ioctl(ev[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		count(&ev[i], ra, &t[i]);
		TH_LOG("%s: %d samples, %d with level3 <- %#lx <- %#lx <- %#lx", name[i],
		       t[i].samples, t[i].chains, ra[0], ra[1], ra[2]);
		TH_LOG("%s: %d with a deferred marker (%d kernel entries), %d records (%d empty)",
		       name[i], t[i].markers, t[i].entries, t[i].deferred, t[i].empty);
		EXPECT_EQ(0, t[i].lost) TH_LOG("the ring lost records; it is too small");
		ASSERT_LE(CHILD_MS * 1000000ULL / PERIOD_NS / 4, t[i].samples)
			TH_LOG("too few samples of %d ms of user time", CHILD_MS);
		/* The child spends nearly all its user time in level3()'s loop. */
		EXPECT_LE(t[i].samples / 2, t[i].chains)
			TH_LOG("fewer than half of the samples have the child's call chain");
		munmap(ev[i].pg, ev[i].len);
		close(ev[i].fd);
	}
	/*
	 * Only samples taken in the execve() that enabled the events may be
	 * deferred: the registers are still AArch64 ones there, until the
	 * new program's start. Their record, written on the way out to the
	 * AArch32 program, may well be empty; every other sample must have
	 * its user stack in place.
	 */
	EXPECT_GE(1, t[1].entries)
		TH_LOG("AArch32 samples deferred: the deferred unwinder cannot walk them");
	close(go[1]);
	close(go[0]);
	close(err[0]);
}

TEST_HARNESS_MAIN
