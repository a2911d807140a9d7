# Run at build time (cmake -P): writes OUT, a header defining AMGSOLVE_GIT_COMMIT as the commit of SOURCE_DIR
# (12 hex digits, "-dirty" when the tree differs; tags are not used) or "unknown" outside a git checkout. The file is rewritten only when the commit
# changed, so that an unchanged tree rebuilds nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12 --exclude=*
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(content "#pragma once\n#define AMGSOLVE_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
