// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the page fault events on faults that user space cannot
 * cause: kernel-mode accesses to kernel addresses.
 *
 * Each case makes one access of a kernel page that set_memory_ro() made
 * read-only, through the nofault accessors, while a probe on both
 * exceptions tracepoints and a perf software page-fault counter of the
 * task watch. A write is a permission fault on a kernel address that the
 * exception table fixes up: it must be reported once, as page_fault_kernel,
 * with the page's address, an ip in kernel text and an error code that says
 * "write". perf's page-faults must not count it: the nofault accessors
 * disable page faults, and perf has never counted such faults. A read of
 * the same page takes no fault and must report nothing (the control that
 * shows the probes see only the access).
 * Documentation/trace/events-page-fault.rst has the table of which faults
 * each architecture reports.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/set_memory.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <trace/events/exceptions.h>

#if defined(CONFIG_X86)
#include <asm/trap_pf.h>
#elif defined(CONFIG_ARM64)
#include <asm/esr.h>
#elif defined(CONFIG_RISCV)
#include <asm/csr.h>
#endif

struct pfe_seen {
	unsigned long target;	/* the address the probes count faults on */
	unsigned int user;
	unsigned int kernel;
	unsigned long ip;
	unsigned long error_code;
};

static void pfe_probe(struct pfe_seen *seen, unsigned int *count,
		      unsigned long address, struct pt_regs *regs,
		      unsigned long error_code)
{
	if (address != seen->target)
		return;
	(*count)++;
	seen->ip = instruction_pointer(regs);
	seen->error_code = error_code;
}

static void pfe_probe_user(void *data, unsigned long address,
			   struct pt_regs *regs, unsigned long error_code)
{
	struct pfe_seen *seen = data;

	pfe_probe(seen, &seen->user, address, regs, error_code);
}

static void pfe_probe_kernel(void *data, unsigned long address,
			     struct pt_regs *regs, unsigned long error_code)
{
	struct pfe_seen *seen = data;

	pfe_probe(seen, &seen->kernel, address, regs, error_code);
}

/* Whether the architecture's error code describes a write to a page that
 * is mapped without write permission.
 */
static bool pfe_write_permission_fault(unsigned long code)
{
#if defined(CONFIG_X86)
	return (code & X86_PF_WRITE) && (code & X86_PF_PROT);
#elif defined(CONFIG_ARM64)
	return (code & ESR_ELx_WNR) && esr_fsc_is_permission_fault(code);
#elif defined(CONFIG_RISCV)
	return code == EXC_STORE_PAGE_FAULT;
#else
	return true;
#endif
}

struct pfe_case {
	const char *name;
	bool write;
};

static const struct pfe_case pfe_cases[] = {
	{ .name = "write to a read-only kernel page", .write = true },
	{ .name = "read of a read-only kernel page", .write = false },
};

KUNIT_ARRAY_PARAM_DESC(pfe, pfe_cases, name);

KUNIT_DEFINE_ACTION_WRAPPER(pfe_vfree, vfree, const void *);
KUNIT_DEFINE_ACTION_WRAPPER(pfe_release, perf_event_release_kernel,
			    struct perf_event *);

/* Page faults the perf counter has seen so far. */
static u64 pfe_faults(struct perf_event *counter)
{
	u64 enabled, running;

	return perf_event_read_value(counter, &enabled, &running);
}

static void pfe_kernel_address(struct kunit *test)
{
	const struct pfe_case *c = test->param_value;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.exclude_user = 1,
	};
	struct pfe_seen seen = {};
	struct perf_event *counter;
	u64 faults;
	unsigned long val = 0x5a5a;
	void *page;
	long ret;

	page = vmalloc(PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, page);
	/* vfree() makes it writable again. */
	set_vm_flush_reset_perms(page);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, pfe_vfree, page));
	*(unsigned long *)page = 0;
	KUNIT_ASSERT_EQ(test, 0, set_memory_ro((unsigned long)page, 1));
	seen.target = (unsigned long)page;

	counter = perf_event_create_kernel_counter(&attr, -1, current, NULL, NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(counter), "perf counter: %ld",
			       PTR_ERR(counter));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, pfe_release, counter));

	KUNIT_ASSERT_EQ(test, 0, register_trace_page_fault_user(pfe_probe_user, &seen));
	if (register_trace_page_fault_kernel(pfe_probe_kernel, &seen)) {
		unregister_trace_page_fault_user(pfe_probe_user, &seen);
		tracepoint_synchronize_unregister();
		KUNIT_FAIL_AND_ABORT(test, "cannot probe page_fault_kernel");
	}
	faults = pfe_faults(counter);
	if (c->write)
		ret = copy_to_kernel_nofault(page, &val, sizeof(val));
	else
		ret = copy_from_kernel_nofault(&val, page, sizeof(val));
	faults = pfe_faults(counter) - faults;
	unregister_trace_page_fault_kernel(pfe_probe_kernel, &seen);
	unregister_trace_page_fault_user(pfe_probe_user, &seen);
	tracepoint_synchronize_unregister();

	KUNIT_EXPECT_EQ(test, 0, seen.user);
	if (!c->write) {
		KUNIT_EXPECT_EQ(test, 0, ret);
		KUNIT_EXPECT_EQ(test, 0, val);
		KUNIT_EXPECT_EQ(test, 0, seen.kernel);
		KUNIT_EXPECT_EQ(test, 0, faults);
		return;
	}
	KUNIT_EXPECT_EQ(test, -EFAULT, ret);
	KUNIT_EXPECT_EQ(test, 0, *(unsigned long *)page);
	KUNIT_EXPECT_EQ(test, 1, seen.kernel);
	KUNIT_EXPECT_EQ_MSG(test, 0, faults,
			    "perf page-faults in kernel mode (tracepoint: %u)",
			    seen.kernel);
	if (seen.kernel) {
		KUNIT_EXPECT_TRUE_MSG(test, kernel_text_address(seen.ip),
				      "ip %pS", (void *)seen.ip);
		KUNIT_EXPECT_TRUE_MSG(test,
				      pfe_write_permission_fault(seen.error_code),
				      "error code 0x%lx", seen.error_code);
	}
}

static struct kunit_case page_fault_event_cases[] = {
	KUNIT_CASE_PARAM(pfe_kernel_address, pfe_gen_params),
	{}
};

static struct kunit_suite page_fault_event_suite = {
	.name = "page_fault_event",
	.test_cases = page_fault_event_cases,
};

kunit_test_suite(page_fault_event_suite);

MODULE_DESCRIPTION("KUnit tests for the page fault events on kernel addresses");
MODULE_LICENSE("GPL");
