// SPDX-License-Identifier: GPL-2.0
/*
 * Who receives PERF_RECORD_CALLCHAIN_DEFERRED, as the UAPI header says:
 * every event with defer_output that gets the task's side-band records,
 * whichever event asked for the record. A child, pinned to one CPU,
 * makes syscalls under three sessions:
 *
 *   sampler:  task-clock samples of the child with defer_callchain;
 *   task:     a dummy event on the child that only sets defer_output;
 *   cpu:      a dummy CPU-wide event on the child's CPU, the same.
 *
 * Every record in the sampler's buffer must be in the other two, byte for
 * byte: the task and CPU sessions get records none of their samples (they
 * have none) refer to, and a consumer must ignore such records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "deferred_records.h"

#define CHILD_MS	200		/* CPU time the child runs */
#define PERIOD_NS	1000000ULL	/* a sample per 1 ms of it */
#define MAX_STACK	16
#define MAX_IPS		64		/* in a record: the child's stack is shallow */

struct ring {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t len;
	char *copy;
	size_t copied;
};

/* A ring for every sample (and record) the child's CPU time gives, and slack. */
static size_t ring_len(long page)
{
	size_t rec = sizeof(struct dr_sample) + (MAX_STACK + 2) * sizeof(__u64) +
		     sizeof(struct dr_deferred) + MAX_IPS * sizeof(__u64);

	return dr_ring_len(CHILD_MS * 1000000ULL / PERIOD_NS + 64, rec, page);
}

static int open_ring(struct ring *r, pid_t pid, int cpu, int sampler, long page)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = sampler ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_period = sampler ? PERIOD_NS : 0,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.sample_max_stack = MAX_STACK,
		.exclude_callchain_kernel = 1,
		.disabled = 1,
		.defer_callchain = sampler,
		.defer_output = 1,
	};

	r->fd = syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->len = ring_len(page);
	r->pg = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->pg == MAP_FAILED)
		return -errno;
	return ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0) ? -errno : 0;
}

static void read_ring(struct ring *r, long page)
{
	ioctl(r->fd, PERF_EVENT_IOC_DISABLE, 0);
	r->copy = malloc(r->len - page);
	r->copied = r->copy ? dr_ring_copy(r->pg, r->copy, r->len - page) : 0;
}

/* Records of one type in a ring, and whether an identical one is there. */
static int count_type(const struct ring *r, __u32 type)
{
	const struct perf_event_header *h;
	size_t off;
	int n = 0;

	for (off = 0; (h = dr_record(r->copy, r->copied, off)); off += h->size)
		n += h->type == type;
	return n;
}

static int has_record(const struct ring *r, const struct perf_event_header *want)
{
	const struct perf_event_header *h;
	size_t off;

	for (off = 0; (h = dr_record(r->copy, r->copied, off)); off += h->size)
		if (h->size == want->size && !memcmp(h, want, h->size))
			return 1;
	return 0;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The child: on @cpu, syscalls for CHILD_MS of CPU time once told to go. */
static void child(int cpu, int go)
{
	cpu_set_t set;
	double end;
	char c;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || read(go, &c, 1) != 1)
		_exit(1);
	end = cpu_ms() + CHILD_MS;
	while (cpu_ms() < end)
		syscall(__NR_getppid);
	_exit(0);
}

TEST(every_defer_output_event_gets_the_records)
{
	static const char * const name[] = { "sampler", "task", "cpu" };
	long page = sysconf(_SC_PAGESIZE);
	int go[2], status, cpu, i, ret, missing[3] = { 0 };
	const struct perf_event_header *h;
	struct ring r[3];
	cpu_set_t set;
	size_t off;
	pid_t pid;

	/* The first CPU this test may use: the child runs there. */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	ASSERT_GT(CPU_SETSIZE, cpu);

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		child(cpu, go[0]);
	close(go[0]);

	for (i = 0; i < 3; i++) {
		ret = open_ring(&r[i], i == 2 ? -1 : pid, i == 2 ? cpu : -1, !i, page);
		if (ret) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			if (ret == -EACCES || ret == -EPERM)
				SKIP(return, "%s event: %s (needs CAP_PERFMON)", name[i],
				     strerror(-ret));
			if (ret == -EINVAL && !i)
				SKIP(return, "perf_event_open: EINVAL (no defer_callchain?)");
			ASSERT_EQ(0, ret) TH_LOG("%s event: %s", name[i], strerror(-ret));
		}
	}
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child failed: status %#x", status);
	for (i = 0; i < 3; i++) {
		read_ring(&r[i], page);
		ASSERT_NE(NULL, r[i].copy);
		TH_LOG("%s: %d samples, %d deferred records, %d lost", name[i],
		       count_type(&r[i], PERF_RECORD_SAMPLE),
		       count_type(&r[i], PERF_RECORD_CALLCHAIN_DEFERRED),
		       count_type(&r[i], PERF_RECORD_LOST));
		EXPECT_EQ(0, count_type(&r[i], PERF_RECORD_LOST))
			TH_LOG("%s: the ring lost records; it is too small", name[i]);
	}
	ASSERT_LE(CHILD_MS * 1000000ULL / PERIOD_NS / 4,
		  count_type(&r[0], PERF_RECORD_CALLCHAIN_DEFERRED))
		TH_LOG("too few deferred records for %d ms of CPU time", CHILD_MS);

	/* Each of the sampler's records, in the other two buffers as well. */
	for (off = 0; (h = dr_record(r[0].copy, r[0].copied, off)); off += h->size) {
		if (h->type != PERF_RECORD_CALLCHAIN_DEFERRED)
			continue;
		for (i = 1; i < 3; i++)
			missing[i] += !has_record(&r[i], h);
	}
	for (i = 1; i < 3; i++) {
		EXPECT_EQ(0, missing[i])
			TH_LOG("%d of the sampler's records are not in the %s session's buffer",
			       missing[i], name[i]);
	}
	/* Only the sampler asked, for the child only: the task session has just those. */
	EXPECT_EQ(count_type(&r[0], PERF_RECORD_CALLCHAIN_DEFERRED),
		  count_type(&r[1], PERF_RECORD_CALLCHAIN_DEFERRED));

	for (i = 0; i < 3; i++) {
		free(r[i].copy);
		munmap(r[i].pg, r[i].len);
		close(r[i].fd);
	}
	close(go[1]);
}

TEST_HARNESS_MAIN
