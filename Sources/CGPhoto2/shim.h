#ifndef UNLEASHED_CGPHOTO2_SHIM_H
#define UNLEASHED_CGPHOTO2_SHIM_H

#include <gphoto2/gphoto2.h>
#include <gphoto2/gphoto2-port-result.h>
#include <gphoto2/gphoto2-version.h>

#endif
