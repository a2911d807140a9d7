#pragma once
// The names the values of an enumeration have in configuration files, reports and messages, declared once
// beside the enumeration: a `names_of(Enum)` overload returning its table, an array (C++17: nvcc compiles
// the CUDA sources, which include these enumerations, as C++17). The schema reads and documents the key
// from that table (config/schema.cpp), name_of writes a value's name, and the library's parameter check
// (amgsolve/parameter_ranges.cpp) asks is_named of a value a caller may have cast from an integer.
namespace amgsolve {

template <class Enum>
struct EnumName {
  const char* name;
  Enum value;
};

// The name of a value in its enumeration's table ("?" for a value the table lacks).
template <class Enum>
const char* name_of(Enum value) {
  for (const EnumName<Enum>& entry : names_of(value))
    if (entry.value == value) return entry.name;
  return "?";
}

// Whether a value is one of its enumeration's named values.
template <class Enum>
bool is_named(Enum value) {
  for (const EnumName<Enum>& entry : names_of(value))
    if (entry.value == value) return true;
  return false;
}

}  // namespace amgsolve
