# cfdb_client_core: the client's sans-I/O building blocks (no sockets, no threads):
# cluster file parsing, read-your-writes write map, conflict ranges, location cache,
# retry policy and key selectors. Included from src/client/CMakeLists.txt.
add_library(cfdb_client_core STATIC
  ${CMAKE_CURRENT_LIST_DIR}/omap.c
  ${CMAKE_CURRENT_LIST_DIR}/range_set.c
  ${CMAKE_CURRENT_LIST_DIR}/write_map.c
)
target_include_directories(cfdb_client_core PUBLIC ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(cfdb_client_core PUBLIC cfdb_common)
