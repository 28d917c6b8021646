// SPDX-License-Identifier: GPL-2.0
/*
 * The exceptions page fault trace events, defined once for the
 * architectures whose fault handlers report faults through
 * page_fault_enter() or page_fault_report().
 */
#include <linux/kprobes.h>
#include <linux/page_fault_event.h>
#include <linux/ptrace.h>

#define CREATE_TRACE_POINTS
#include <trace/events/exceptions.h>

/* Out of line, as Documentation/trace/tracepoints.rst asks of headers. */
void do_page_fault_trace(struct pt_regs *regs, unsigned long address,
			 unsigned long error_code)
{
	if (user_mode(regs))
		trace_page_fault_user(address, regs, error_code);
	else
		trace_page_fault_kernel(address, regs, error_code);
}
NOKPROBE_SYMBOL(do_page_fault_trace);
