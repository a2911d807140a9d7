// The translation unit that builds the precompiled headers (cmake/PrecompiledHeaders.cmake).
