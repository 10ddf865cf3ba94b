// The BlueZ client: see the files of this module.
