/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_PAGE_FAULT_EVENT_H
#define _LINUX_PAGE_FAULT_EVENT_H

#include <linux/jump_label.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <trace/events/exceptions.h>

#ifdef CONFIG_TRACEPOINTS
/* On while either trace event has a probe: page_fault_trace_reg() */
DECLARE_STATIC_KEY_FALSE(page_fault_trace_key);
#define page_fault_traced()	static_branch_unlikely(&page_fault_trace_key)
#else
#define page_fault_traced()	false
#endif

/**
 * page_fault_event - Report a page fault to tracing and to perf
 * @regs: the registers at the time of the fault
 * @address: the faulting address, as the handler goes on to use it
 * @error_code: the architecture's description of the fault (the x86 error
 *	code, the arm64 ESR, the riscv scause)
 *
 * An architecture's page fault handler calls this once for every fault it
 * takes, right after kprobe_page_fault() has had its say and before it
 * decides anything about the fault. It emits, in this order:
 *
 * 1. the exceptions:page_fault_user tracepoint for a fault taken in user
 *    mode, exceptions:page_fault_kernel otherwise;
 * 2. the PERF_COUNT_SW_PAGE_FAULTS software event.
 *
 * Both therefore see the same faults: those kprobe_page_fault() consumed
 * (faults in a probe's handler that the architecture's kprobes fixed up)
 * are not reported; all others are, whatever comes of them: faults that
 * are resolved, that end in a signal, an exception fixup or an oops, and
 * faults taken with page faults disabled. A fault of an instruction that
 * kprobes single-step out of line is reported with the probed address as
 * the instruction pointer, which kprobe_page_fault() has put back. Which
 * exceptions reach the page fault handler is the architecture's business;
 * see Documentation/trace/events-page-fault.rst.
 *
 * With the trace events and the perf event disabled, it adds one static
 * branch to the fault path, whichever mode the fault was taken in: the
 * trace events are behind one key of their own, on while either of them
 * has a probe, and the perf event's branch was on the path already.
 *
 * This must be inlined: the fault handlers that call it may not be probed.
 */
static __always_inline void page_fault_event(struct pt_regs *regs,
					     unsigned long address,
					     unsigned long error_code)
{
	if (page_fault_traced()) {
		if (user_mode(regs))
			trace_page_fault_user(address, regs, error_code);
		else
			trace_page_fault_kernel(address, regs, error_code);
	}

	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 1, regs, address);
}

#endif /* _LINUX_PAGE_FAULT_EVENT_H */
