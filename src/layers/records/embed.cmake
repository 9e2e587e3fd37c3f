# Writes a binary file as a C array: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
# (the Record Layer's schema descriptor set, made by protoc at build time).
file(READ "${IN}" _hex HEX)
string(LENGTH "${_hex}" _len)
math(EXPR _bytes "${_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _arr "${_hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n    " _arr "${_arr}")
file(WRITE "${OUT}" "/* Generated from ${IN} by embed.cmake: do not edit. */\n#include <stddef.h>\n#include <stdint.h>\n\nextern const uint8_t ${NAME}[];\nextern const size_t ${NAME}_size;\nconst uint8_t ${NAME}[] = {\n    ${_arr}\n};\nconst size_t ${NAME}_size = ${_bytes};\n")
