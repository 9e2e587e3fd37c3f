# cfdb_client_core: the client's sans-I/O building blocks (no sockets, no threads):
# cluster file parsing, read-your-writes write map, conflict ranges, location cache,
# retry policy and key selectors. Included from src/client/CMakeLists.txt.
add_library(cfdb_client_core STATIC
  ${CMAKE_CURRENT_LIST_DIR}/omap.c
  ${CMAKE_CURRENT_LIST_DIR}/range_set.c
  ${CMAKE_CURRENT_LIST_DIR}/write_map.c
  ${CMAKE_CURRENT_LIST_DIR}/cluster_file.c
  ${CMAKE_CURRENT_LIST_DIR}/retry_policy.c
  ${CMAKE_CURRENT_LIST_DIR}/conflict_ranges.c
  ${CMAKE_CURRENT_LIST_DIR}/location_cache.c
  ${CMAKE_CURRENT_LIST_DIR}/key_selector.c
  ${CMAKE_CURRENT_LIST_DIR}/native_tx.c
  ${CMAKE_CURRENT_LIST_DIR}/snap_cache.c
  ${CMAKE_CURRENT_LIST_DIR}/ryw_iter.c
  ${CMAKE_CURRENT_LIST_DIR}/ryw_read.c
  ${CMAKE_CURRENT_LIST_DIR}/native_range.c
  # perf (issue 14): range rows copied in bulk
  ${CMAKE_CURRENT_LIST_DIR}/kv_rows.c
)
target_include_directories(cfdb_client_core PUBLIC ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(cfdb_client_core PUBLIC cfdb_wire cfdb_common)

# tenants (issue 12, client): a tenant transaction's commit made absolute (applyTenantPrefix)
target_sources(cfdb_client_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tenant_commit.c)

# tenant_commit.c is declared in tenant.h, which reaches the event loop through database.h:
# the one core file that still sees src/net's headers.
target_include_directories(cfdb_client_core PRIVATE ${PROJECT_SOURCE_DIR}/src/net)
