#include "CConcurrencyHooks.h"

// Declared as the runtime defines it (a pointer, set once), not as its function type,
// which C spells only with the Swift calling convention: only its address is taken here.
extern void *swift_task_enqueueGlobal_hook;

void *_Nullable *_Nonnull gpsfix_enqueue_global_hook(void) {
    return &swift_task_enqueueGlobal_hook;
}
