// Moved to shm/routing.h (the routing rule is part of the shared-memory contract); kept so that
// branches that still include this path merge and build unchanged.
#pragma once
#include "shm/routing.h"
