// libmosquitto's types and constants only: the library itself is opened at run time (MQTT's
// LibMosquitto), so that the commands, which never speak MQTT, do not load it and the TLS
// libraries it brings at every start.
#include <mosquitto.h>
