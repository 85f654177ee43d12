// The one source of tandem_test_pch (tests/CMakeLists.txt): the target exists to build the
// precompiled header every test executable reuses; it has no code of its own.
