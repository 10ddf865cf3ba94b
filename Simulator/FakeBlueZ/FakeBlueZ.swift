// The fake org.bluez.
