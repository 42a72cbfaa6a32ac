#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "CMosquitto.h"

// The functions the daemon calls: return type, name, parameters, arguments.
#define MOSQUITTO_FUNCTIONS(X) \
    X(int, mosquitto_lib_init, (void), ()) \
    X(struct mosquitto *, mosquitto_new, (const char *id, bool clean, void *obj), (id, clean, obj)) \
    X(void, mosquitto_destroy, (struct mosquitto *m), (m)) \
    X(int, mosquitto_will_set, (struct mosquitto *m, const char *t, int n, const void *p, int q, bool r), (m, t, n, p, q, r)) \
    X(int, mosquitto_username_pw_set, (struct mosquitto *m, const char *u, const char *p), (m, u, p)) \
    X(int, mosquitto_connect, (struct mosquitto *m, const char *h, int p, int k), (m, h, p, k)) \
    X(int, mosquitto_reconnect, (struct mosquitto *m), (m)) \
    X(int, mosquitto_disconnect, (struct mosquitto *m), (m)) \
    X(int, mosquitto_publish, (struct mosquitto *m, int *id, const char *t, int n, const void *p, int q, bool r), (m, id, t, n, p, q, r)) \
    X(int, mosquitto_subscribe, (struct mosquitto *m, int *id, const char *s, int q), (m, id, s, q)) \
    X(int, mosquitto_loop_forever, (struct mosquitto *m, int t, int n), (m, t, n)) \
    X(int, mosquitto_threaded_set, (struct mosquitto *m, bool t), (m, t)) \
    X(int, mosquitto_reconnect_delay_set, (struct mosquitto *m, unsigned int d, unsigned int x, bool e), (m, d, x, e)) \
    X(void, mosquitto_user_data_set, (struct mosquitto *m, void *o), (m, o)) \
    X(int, mosquitto_tls_set, \
        (struct mosquitto *m, const char *f, const char *d, const char *c, const char *k, \
            int (*pw)(char *, int, int, void *)), \
        (m, f, d, c, k, pw)) \
    X(void, mosquitto_connect_callback_set, (struct mosquitto *m, void (*c)(struct mosquitto *, void *, int)), (m, c)) \
    X(void, mosquitto_disconnect_callback_set, (struct mosquitto *m, void (*c)(struct mosquitto *, void *, int)), (m, c)) \
    X(void, mosquitto_publish_callback_set, (struct mosquitto *m, void (*c)(struct mosquitto *, void *, int)), (m, c)) \
    X(void, mosquitto_message_callback_set, \
        (struct mosquitto *m, void (*c)(struct mosquitto *, void *, const struct mosquitto_message *)), (m, c)) \
    X(void, mosquitto_log_callback_set, (struct mosquitto *m, void (*c)(struct mosquitto *, void *, int, const char *)), (m, c)) \
    X(const char *, mosquitto_strerror, (int e), (e)) \
    X(const char *, mosquitto_connack_string, (int c), (c))

#define POINTER(type, name, parameters, arguments) static type(*loaded_##name) parameters;
MOSQUITTO_FUNCTIONS(POINTER)

#define TRAMPOLINE(type, name, parameters, arguments) \
    type name parameters { return loaded_##name arguments; }
MOSQUITTO_FUNCTIONS(TRAMPOLINE)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure = "libmosquitto is not loaded";

// A copy of dlerror's text, which is the library's until its next call; a failure still
// when it has none or there is no memory for the copy.
static const char *copy_of_dlerror(void) {
    const char *text = dlerror();
    const char *copy = text != NULL ? strdup(text) : NULL;
    return copy != NULL ? copy : "libmosquitto is not loaded";
}

static void load(void) {
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        failure = copy_of_dlerror();
        return;
    }
#define RESOLVE(type, name, parameters, arguments) \
    if ((*(void **)&loaded_##name = dlsym(library, #name)) == NULL) { \
        failure = copy_of_dlerror(); \
        return; \
    }
    MOSQUITTO_FUNCTIONS(RESOLVE)
    failure = NULL;
}

const char *cmosquitto_load(void) {
    pthread_once(&once, load);
    return failure;
}
