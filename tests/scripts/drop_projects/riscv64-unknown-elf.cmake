# A bare-metal RISC-V toolchain file (Debian's riscv64-unknown-elf-gcc has no C
# library: the library is built, not linked into an image).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_C_FLAGS_INIT "-march=rv64gc -mabi=lp64d -mcmodel=medany -ffreestanding")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
