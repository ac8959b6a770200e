// libgit2 through Debian's libgit2-dev (pkg-config libgit2); FerryVault is its only user.
#include <git2.h>
