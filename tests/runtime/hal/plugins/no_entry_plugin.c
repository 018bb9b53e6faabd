// A shared library that is not a driver plugin (no entry symbol).
__attribute__((visibility("default"))) int not_a_kiln_plugin(void) { return 7; }
