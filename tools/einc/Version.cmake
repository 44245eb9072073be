# Writes OUTPUT (Version.inc) with the project version and the git commit of
# SOURCE_DIR, at every build; the file changes (and einc.cpp recompiles) only
# when the commit does. Without git or outside a checkout: "unknown".
execute_process(
  COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "#define EINC_VERSION \"${VERSION}\"\n#define EINC_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
