#ifndef UNLEASHED_CTURBOJPEG_SHIM_H
#define UNLEASHED_CTURBOJPEG_SHIM_H

#include <turbojpeg.h>

#endif
