// The Swift runtime's hook for its global executor (swift/Runtime/ConcurrencyHooks.def),
// reached by the linker rather than by dlsym: the packaged binary links the runtime
// statically, and its symbols are neither exported nor visible to dlsym.
#ifndef GPSFIX_CCONCURRENCYHOOKS_H
#define GPSFIX_CCONCURRENCYHOOKS_H

/// Where `swift_task_enqueueGlobal_hook` is: a function of the Swift calling convention
/// taking the job and the runtime's own enqueue, or null while the runtime's is used.
void *_Nullable *_Nonnull gpsfix_enqueue_global_hook(void);

#endif
