# Assembles each fuzz target's seed corpus in OUT_DIR/<name>/ (run by the fuzz_seeds target):
#   cmake -DSOURCE_DIR=<repo> -DSHARED_DIR=<shared/testdata> -DOUT_DIR=<dir> -P seed_corpus.cmake
# Sources: the committed seeds (tests/fuzz/seeds/<name>/), the regression corpus
# (tests/fuzz/regressions/<name>/) and, for the GGUF reader, every GGUF file of tests/data and
# shared/testdata/bad (when present). Files over 512 KiB are left out: the fuzzer mutates
# whole inputs, and a megabyte of tensor data slows every execution without reaching new code.
set(fuzz_dir ${SOURCE_DIR}/tests/fuzz)
set(limit 524288)

function(add_seeds name)
  foreach(file ${ARGN})
    file(SIZE ${file} size)
    if(size GREATER limit)
      continue()
    endif()
    # Unique names: the same base name comes from several folders.
    file(SHA1 ${file} hash)
    get_filename_component(base ${file} NAME)
    file(COPY_FILE ${file} ${OUT_DIR}/${name}/${hash}-${base} ONLY_IF_DIFFERENT)
  endforeach()
endfunction()

file(GLOB names LIST_DIRECTORIES true RELATIVE ${fuzz_dir}/seeds ${fuzz_dir}/seeds/*)
list(APPEND names gguf)
list(REMOVE_DUPLICATES names)
foreach(name ${names})
  file(REMOVE_RECURSE ${OUT_DIR}/${name})
  file(MAKE_DIRECTORY ${OUT_DIR}/${name})
  file(GLOB_RECURSE files ${fuzz_dir}/seeds/${name}/* ${fuzz_dir}/regressions/${name}/*)
  list(FILTER files EXCLUDE REGEX "README\\.md$")
  add_seeds(${name} ${files})
endforeach()

file(GLOB_RECURSE gguf_files ${SOURCE_DIR}/tests/data/*.gguf)
if(EXISTS ${SHARED_DIR}/bad)
  file(GLOB shared_bad ${SHARED_DIR}/bad/*.gguf)
  list(APPEND gguf_files ${shared_bad})
endif()
add_seeds(gguf ${gguf_files})
