// Symbol visibility for the SDK shared library. Everything is hidden by default; the SDK's
// public types are exported so that typeinfo (and so exceptions) is shared by host and plugins.
#pragma once

#if defined(CKSDK_BUILDING)
#define CK_SDK_API __attribute__((visibility("default")))
#else
#define CK_SDK_API __attribute__((visibility("default")))
#endif

// Marks the one function every plugin exports.
#define CK_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
