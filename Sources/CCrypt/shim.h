// libxcrypt (Debian's libcrypt1): crypt_rn checks a password against the hashes
// htpasswd writes (bcrypt's $2y$, SHA-256/512 crypt), thread-safe, without a static buffer.
#include <crypt.h>
