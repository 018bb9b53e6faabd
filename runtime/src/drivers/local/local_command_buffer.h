// Command buffers of the local driver: recording stores commands in the
// drivers' shared command list (drivers/common/command_list.h: concrete
// buffers, executables and channels retained); execution
// runs them in order on the device's queue thread, dispatches spreading
// their workgroups over the driver's thread pool.
//
// Recording is single-threaded (HAL rule). After end() the command list is
// immutable, so executions may run concurrently from several queues.
#ifndef KILN_DRIVERS_LOCAL_LOCAL_COMMAND_BUFFER_H_
#define KILN_DRIVERS_LOCAL_LOCAL_COMMAND_BUFFER_H_

#include <functional>

#include "base/thread_pool.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::local {

kiln_status_t createCommandBuffer(kiln_hal_command_buffer_mode_t mode,
                                  uint32_t bindingCapacity,
                                  kiln_hal_command_buffer_t** outCommandBuffer);

// Checks that |table| binds every slot |commandBuffer| uses, with local
// buffers large enough for the recorded ranges. INVALID_ARGUMENT otherwise,
// or if |commandBuffer| was not made by the local driver.
kiln_status_t validateBindingTable(kiln_hal_command_buffer_t* commandBuffer,
                                   const kiln_hal_binding_table_t& table);

// Runs the commands. |table| has been validated (lengths resolved).
// |cancelled| is polled by commands that wait for other devices
// (collectives), so that destroying the device does not hang.
// Runs the commands on the host; with |profile| (a profiled submission),
// appends each command's wall time, as command buffer |commandBufferIndex|.
kiln_status_t executeCommandBuffer(kiln_hal_command_buffer_t* commandBuffer,
                                   const kiln_hal_binding_t* table,
                                   ThreadPool& pool,
                                   const std::function<bool()>& cancelled,
                                   kiln_hal_execution_profile_t* profile,
                                   uint32_t commandBufferIndex);

}  // namespace kiln::local

#endif  // KILN_DRIVERS_LOCAL_LOCAL_COMMAND_BUFFER_H_
