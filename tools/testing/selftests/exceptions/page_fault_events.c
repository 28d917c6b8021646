// SPDX-License-Identifier: GPL-2.0
/*
 * Check the exceptions:page_fault_user and exceptions:page_fault_kernel
 * tracepoints: trigger page faults with a known address, instruction
 * pointer and access type, record them in a private tracefs instance and
 * verify what the events report.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define USER_MAP_ADDR		0xcafe0000UL
#define USER_MAP_PAGES		16
#define KERNEL_BUF_PAGES	4
#define MAX_EVENTS		256

/*
 * The faulting store must be inside touch_pages(). The function is a short
 * loop, so its code is far smaller than this; the bound only has to stop an
 * ip elsewhere in the binary from being accepted.
 */
#define TOUCH_PAGES_MAX_SIZE	256

struct pf_event {
	unsigned long address;
	unsigned long ip;
	unsigned long error_code;
	bool ip_is_hex;		/* %ps found no symbol and printed a number */
	char ip_text[128];
};

/*
 * Return 1 if @err is the error code of a write to a not-present page taken
 * in user mode (@user) or kernel mode (!@user), 0 if it is not, and -1 if
 * this architecture's error codes are not known to the test.
 */
#if defined(__aarch64__)
static int is_write_miss(unsigned long err, bool user)
{
	unsigned long ec = (err >> 26) & 0x3f;	/* ESR_ELx.EC */
	unsigned long dfsc = err & 0x3f;	/* ESR_ELx.ISS.DFSC */
	bool wnr = err & (1UL << 6);		/* ESR_ELx.ISS.WnR */

	/* 0x24: data abort from a lower EL, 0x25: from the same EL */
	if (ec != (user ? 0x24 : 0x25) || !wnr)
		return 0;
	/* Translation fault, level 0 to 3 */
	return dfsc >= 0x04 && dfsc <= 0x07;
}
#elif defined(__x86_64__) || defined(__i386__)
static int is_write_miss(unsigned long err, bool user)
{
	/* X86_PF_PROT, X86_PF_WRITE, X86_PF_USER, X86_PF_INSTR */
	const unsigned long pf_prot = 0x1, pf_write = 0x2, pf_user = 0x4, pf_instr = 0x10;
	unsigned long want = pf_write | (user ? pf_user : 0);

	return (err & (pf_prot | pf_write | pf_user | pf_instr)) == want;
}
#elif defined(__riscv)
static int is_write_miss(unsigned long err, bool user)
{
	/* scause 15: store/AMO page fault; the mode is not encoded */
	return err == 15;
}
#else
static int is_write_miss(unsigned long err, bool user)
{
	return -1;
}
#endif

/* Write @val to @dir/@file. Returns 0 or -errno. */
static int write_file(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	ssize_t len = strlen(val);
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	errno = 0;
	if (write(fd, val, len) != len)
		ret = errno ? -errno : -EIO;
	close(fd);
	return ret;
}

/* Parse "0x<hex>" spanning exactly [s, end). */
static bool parse_hex(const char *s, const char *end, unsigned long *val)
{
	char *p;

	if (end - s < 3 || s[0] != '0' || s[1] != 'x')
		return false;
	errno = 0;
	*val = strtoul(s + 2, &p, 16);
	return !errno && p == end;
}

/*
 * Parse the part of a trace line after "<event>: ", which looks like
 * "address=%ps ip=%ps error_code=0x%lx". The ip may be a symbol name
 * (possibly followed by " [module]") or a plain number.
 */
static bool parse_event(const char *s, struct pf_event *ev)
{
	const char *ip = strstr(s, " ip=");
	const char *err = strstr(s, " error_code=");
	const char *end;
	size_t len;

	if (strncmp(s, "address=", 8) || !ip || !err || err < ip)
		return false;
	if (!parse_hex(s + 8, ip, &ev->address))
		return false;

	ip += 4;
	len = err - ip;
	if (!len || len >= sizeof(ev->ip_text))
		return false;
	memcpy(ev->ip_text, ip, len);
	ev->ip_text[len] = '\0';
	ev->ip_is_hex = parse_hex(ip, err, &ev->ip);

	err += strlen(" error_code=");
	end = err + strcspn(err, "\n");
	return parse_hex(err, end, &ev->error_code);
}

/*
 * Collect the @event lines of the instance's trace file into @evs.
 * Returns the number of events, or -1 if a line could not be parsed or
 * there were more than @max events.
 */
static int read_events(const char *dir, const char *event, struct pf_event *evs, int max)
{
	char path[PATH_MAX], tag[64];
	size_t size = 0;
	char *line = NULL, *p;
	int nr = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", dir);
	snprintf(tag, sizeof(tag), " %s: ", event);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (getline(&line, &size, f) > 0) {
		if (line[0] == '#')
			continue;
		p = strstr(line, tag);
		if (!p)
			continue;
		if (nr == max || !parse_event(p + strlen(tag), &evs[nr])) {
			nr = -1;
			break;
		}
		nr++;
	}
	free(line);
	fclose(f);
	return nr;
}

/* Enable or disable one event of the exceptions system in the instance. */
static int set_event(const char *dir, const char *event, bool on)
{
	char file[128];

	snprintf(file, sizeof(file), "events/exceptions/%s/enable", event);
	return write_file(dir, file, on ? "1" : "0");
}

/* Kernel addresses are in the upper half of the address space. */
static bool is_kernel_ip(const struct pf_event *ev)
{
	if (!ev->ip_is_hex)
		return true;	/* a symbol: user addresses print as numbers */
	return ev->ip >> (sizeof(long) * CHAR_BIT - 1);
}

/*
 * Performs one store per page: the faulting instruction of the user test.
 * It is only called through call_touch_pages(), so it is never inlined and
 * the stores run at &touch_pages.
 */
static void touch_pages(char *p, size_t nr, size_t step)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		p[i * step] = 1;
		/* Keep exactly one store per page. */
		asm volatile("" ::: "memory");
	}
}

/*
 * Call touch_pages() through a pointer the compiler cannot see through, so it
 * can neither inline it nor call a specialised copy at another address.
 */
static void call_touch_pages(char *p, size_t nr, size_t step)
{
	void (*fn)(char *p, size_t nr, size_t step) = touch_pages;

	asm volatile("" : "+r" (fn));
	fn(p, nr, step);
}

struct trace_instance {
	char dir[PATH_MAX];	/* empty when there is no instance */
	const char *tracefs;
	bool mounted;
};

#define TRACEFS_MOUNT	"/sys/kernel/tracing"

static bool find_tracefs(struct trace_instance *inst)
{
	static const char * const paths[] = { TRACEFS_MOUNT, "/sys/kernel/debug/tracing" };
	char path[PATH_MAX];
	unsigned int i;

	if (access(TRACEFS_MOUNT "/instances", F_OK) &&
	    !mount("nodev", TRACEFS_MOUNT, "tracefs", 0, NULL))
		inst->mounted = true;

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		snprintf(path, sizeof(path), "%s/instances", paths[i]);
		if (!access(path, F_OK)) {
			inst->tracefs = paths[i];
			return true;
		}
	}
	return false;
}

static bool has_event(struct trace_instance *inst, const char *event)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/events/exceptions/%s", inst->tracefs, event);
	return !access(path, F_OK);
}

/* Remove the instance and unmount tracefs if we mounted it. */
static void remove_instance(struct trace_instance *inst)
{
	if (inst->dir[0]) {
		write_file(inst->dir, "events/enable", "0");
		if (rmdir(inst->dir))
			fprintf(stderr, "# cannot remove %s: %s\n", inst->dir, strerror(errno));
		inst->dir[0] = '\0';
	}
	if (inst->mounted) {
		umount(TRACEFS_MOUNT);
		inst->mounted = false;
	}
}

/* Create the instance and restrict both events to this process. */
static int create_instance(struct trace_instance *inst)
{
	static const char * const filters[] = {
		"events/exceptions/page_fault_user/filter",
		"events/exceptions/page_fault_kernel/filter",
	};
	char pid_filter[64];
	unsigned int i;
	int ret;

	snprintf(inst->dir, sizeof(inst->dir), "%s/instances/selftest_page_fault_%d",
		 inst->tracefs, getpid());
	if (mkdir(inst->dir, 0700)) {
		ret = -errno;
		inst->dir[0] = '\0';
		return ret;
	}

	/* Keep the events in order even if the task migrates between CPUs. */
	ret = write_file(inst->dir, "trace_clock", "global");
	snprintf(pid_filter, sizeof(pid_filter), "common_pid == %d", getpid());
	for (i = 0; !ret && i < ARRAY_SIZE(filters); i++)
		ret = write_file(inst->dir, filters[i], pid_filter);
	return ret;
}

FIXTURE(page_fault)
{
	struct trace_instance inst;
};

/*
 * The teardown only runs once the setup succeeded, so the setup cleans up
 * after itself before skipping or failing.
 */
FIXTURE_SETUP(page_fault)
{
	int ret;

	if (geteuid())
		SKIP(return, "must be run as root");
	if (!find_tracefs(&self->inst)) {
		remove_instance(&self->inst);
		SKIP(return, "tracefs with instances support is not available");
	}
	if (!has_event(&self->inst, "page_fault_user") ||
	    !has_event(&self->inst, "page_fault_kernel")) {
		remove_instance(&self->inst);
		SKIP(return, "exceptions:page_fault_{user,kernel} events are not available");
	}

	ret = create_instance(&self->inst);
	if (ret)
		remove_instance(&self->inst);
	ASSERT_EQ(0, ret) TH_LOG("cannot set up a tracefs instance: %s", strerror(-ret));
}

/* Runs in the parent, so the instance goes away even if the test crashed. */
FIXTURE_TEARDOWN_PARENT(page_fault)
{
	remove_instance(&self->inst);
}

/*
 * Write one byte to each page of a fresh mapping at a fixed address: every
 * store must produce one page_fault_user event with the page's address, the
 * ip of the store instruction and a write-to-not-present-page error code.
 */
TEST_F(page_fault, user_write)
{
	size_t page_size = getpagesize();
	size_t len = USER_MAP_PAGES * page_size;
	unsigned long fn = (unsigned long)touch_pages;
	unsigned long first_ip = 0;
	struct pf_event *evs;
	int nr, i, n = 0;
	char *map;

	map = mmap((void *)USER_MAP_ADDR, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (map == MAP_FAILED && errno == EEXIST)
		SKIP(return, "address 0x%lx is already mapped", USER_MAP_ADDR);
	ASSERT_NE(MAP_FAILED, map);
	if (map != (char *)USER_MAP_ADDR) {
		/* Kernels without MAP_FIXED_NOREPLACE treat the address as a hint. */
		munmap(map, len);
		SKIP(return, "cannot map at 0x%lx", USER_MAP_ADDR);
	}
	/* One fault per page: no huge pages, no large folios. */
	madvise(map, len, MADV_NOHUGEPAGE);

	evs = calloc(MAX_EVENTS, sizeof(*evs));
	ASSERT_NE(NULL, evs);

	/* Fault in the code of touch_pages() before tracing starts. */
	call_touch_pages(map, 0, page_size);

	ASSERT_EQ(0, set_event(self->inst.dir, "page_fault_user", true));
	call_touch_pages(map, USER_MAP_PAGES, page_size);
	ASSERT_EQ(0, set_event(self->inst.dir, "page_fault_user", false));

	nr = read_events(self->inst.dir, "page_fault_user", evs, MAX_EVENTS);
	ASSERT_GE(nr, 0) TH_LOG("cannot read or parse the trace of %s", self->inst.dir);

	/* Other faults of this process (stack, text) may be recorded: skip them. */
	for (i = 0; i < nr; i++) {
		struct pf_event *ev = &evs[i];

		if (ev->address < USER_MAP_ADDR || ev->address >= USER_MAP_ADDR + len) {
			TH_LOG("not in the mapping: address=0x%lx ip=%s error_code=0x%lx",
			       ev->address, ev->ip_text, ev->error_code);
			continue;
		}
		EXPECT_EQ(USER_MAP_ADDR + n * page_size, ev->address);
		EXPECT_TRUE(ev->ip_is_hex) TH_LOG("user ip printed as \"%s\"", ev->ip_text);
		EXPECT_GE(ev->ip, fn);
		EXPECT_LT(ev->ip, fn + TOUCH_PAGES_MAX_SIZE)
			TH_LOG("ip 0x%lx not in touch_pages() at 0x%lx", ev->ip, fn);
		EXPECT_NE(0, is_write_miss(ev->error_code, true))
			TH_LOG("error_code 0x%lx is not a user write to a not-present page",
			       ev->error_code);
		/* Every event must carry the ip of the first one. */
		if (n == 0)
			first_ip = ev->ip;
		EXPECT_EQ(first_ip, ev->ip);
		n++;
	}
	EXPECT_EQ(USER_MAP_PAGES, n);
	if (n != USER_MAP_PAGES) {
		for (i = 0; i < nr; i++)
			TH_LOG("event %d: address=0x%lx ip=%s error_code=0x%lx",
			       i, evs[i].address, evs[i].ip_text, evs[i].error_code);
	}

	free(evs);
	munmap(map, len);
}

/*
 * read() from a memfd into memory that was never touched: copying to user
 * space faults in kernel mode, which must produce page_fault_kernel events
 * with an address inside the buffer, a kernel ip and a write error code.
 */
TEST_F(page_fault, kernel_write_to_user)
{
	size_t len = KERNEL_BUF_PAGES * getpagesize();
	unsigned long start, end;
	struct pf_event *evs;
	char *buf, *data;
	int fd, nr, i, n = 0;
	ssize_t ret;
	size_t off;

	data = malloc(len);
	ASSERT_NE(NULL, data);
	for (off = 0; off < len; off++)
		data[off] = off * 7 + 3;

	fd = memfd_create("page_fault_events", MFD_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("memfd_create: %s", strerror(errno));
	ASSERT_EQ((ssize_t)len, write(fd, data, len));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	start = (unsigned long)buf;
	end = start + len;

	evs = calloc(MAX_EVENTS, sizeof(*evs));
	ASSERT_NE(NULL, evs);

	ASSERT_EQ(0, set_event(self->inst.dir, "page_fault_kernel", true));
	ret = read(fd, buf, len);
	ASSERT_EQ(0, set_event(self->inst.dir, "page_fault_kernel", false));

	EXPECT_EQ((ssize_t)len, ret);
	EXPECT_EQ(0, memcmp(buf, data, len));

	nr = read_events(self->inst.dir, "page_fault_kernel", evs, MAX_EVENTS);
	ASSERT_GE(nr, 0) TH_LOG("cannot read or parse the trace of %s", self->inst.dir);

	for (i = 0; i < nr; i++) {
		struct pf_event *ev = &evs[i];

		if (ev->address < start || ev->address >= end)
			continue;
		n++;
		EXPECT_TRUE(is_kernel_ip(ev))
			TH_LOG("ip \"%s\" is not a kernel address", ev->ip_text);
		EXPECT_NE(0, is_write_miss(ev->error_code, false))
			TH_LOG("error_code 0x%lx is not a kernel write to a not-present page",
			       ev->error_code);
	}
	EXPECT_LE(1, n) TH_LOG("no page_fault_kernel event in [0x%lx, 0x%lx)", start, end);
	if (!n) {
		for (i = 0; i < nr; i++)
			TH_LOG("event %d: address=0x%lx ip=%s error_code=0x%lx",
			       i, evs[i].address, evs[i].ip_text, evs[i].error_code);
	}

	free(evs);
	munmap(buf, len);
	free(data);
	close(fd);
}

TEST_HARNESS_MAIN
