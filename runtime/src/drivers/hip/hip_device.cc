#include "drivers/hip/hip_device.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "drivers/common/driver_queue.h"
#include "drivers/hip/hip_buffer.h"
#include "drivers/hip/hip_collectives.h"
#include "drivers/hip/hip_comm_window.h"
#include "drivers/hip/hip_command_buffer.h"
#include "drivers/hip/hip_executable.h"
#include "drivers/hip/hip_semaphore.h"

namespace kiln::hip {
namespace {

// How often a queue thread blocked on a wait checks whether its device is
// being destroyed. Wake-ups on signals are immediate; this only bounds how
// long device destruction takes when a wait never resolves.
constexpr kiln_duration_t kShutdownPollNs = 20 * 1000 * 1000;

// How long destroying a device waits for submitted collectives whose peers
// have not joined before it aborts the device's communicators.
constexpr auto kCollectiveAbortGrace = std::chrono::seconds(10);

using drivers::OperationKind;
using drivers::SemaphoreList;
using drivers::semaphoreVTable;

// One queue operation, with what the hip queue adds.
struct Operation : drivers::QueueOperation {
  using QueueOperation::QueueOperation;
  uint64_t sequence = 0;  // 1-based number of the execute on this device
  bool injectFailure = false;
  // Communicators the command buffers' collectives use.
  std::vector<std::shared_ptr<Comm>> comms;
};

// The timing events of a profiled submission: one pair around the whole
// submission and one around each timed command, from the context's free
// timing events. Owned by its Completion; the events are read once the
// submission completed, then given back.
class SubmissionTimer final : public CommandTimer {
 public:
   explicit SubmissionTimer(std::shared_ptr<const DeviceContext> context)
       : context(std::move(context)) {}

   // Command buffer |index| of the submission is issued next.
   void setCommandBuffer(uint32_t index) { commandBuffer = index; }

   kiln_status_t markSpan(hipStream_t stream, bool end) {
     return record(stream, end ? &spanEnd : &spanStart);
  }

  // The event that ends the span once markSpan(end) recorded it: it also
  // marks the submission's completion (nothing follows it on the stream).
  std::shared_ptr<Event> spanEndEvent() const {
    return spanEnd ? events.back() : nullptr;
  }

  kiln_status_t mark(size_t index, drivers::CommandKind kind,
                     hipStream_t stream, bool end) override {
    if (!end) commands.push_back({commandBuffer, uint32_t(index), kind});
    return record(stream, end ? &commands.back().end : &commands.back().start);
  }

  // Writes the times into |profile| (the submission completed).
  kiln_status_t collect(kiln_hal_execution_profile_t* profile) {
    const DeviceContext &ctx = *context;
    for (const Timed& timed : commands) {
      float ms = 0;
      KILN_HIP_RETURN_IF_ERROR(
          ctx.check(ctx.platform->eventElapsedTime(&ms, timed.start, timed.end),
                    "hipEventElapsedTime"));
      drivers::appendTiming(profile, timed.commandBuffer, timed.command,
                            timed.kind, uint64_t(double(ms) * 1e6));
    }
    if (spanStart && spanEnd) {
      float ms = 0;
      KILN_HIP_RETURN_IF_ERROR(
          ctx.check(ctx.platform->eventElapsedTime(&ms, spanStart, spanEnd),
                    "hipEventElapsedTime"));
      profile->span_ns = uint64_t(double(ms) * 1e6);
    }
    return nullptr;
  }

 private:
  struct Timed {
    uint32_t commandBuffer;
    uint32_t command;
    drivers::CommandKind kind;
    hipEvent_t start = nullptr;
    hipEvent_t end = nullptr;
  };

  kiln_status_t record(hipStream_t stream, hipEvent_t* out) {
    std::shared_ptr<Event> event;
    KILN_HIP_RETURN_IF_ERROR(Event::create(context, &event, /*timing=*/true));
    events.push_back(event);
    KILN_HIP_RETURN_IF_ERROR(
        context->check(context->platform->eventRecord(event->get(), stream),
                       "hipEventRecord (timing)"));
    *out = event->get(); // only once recorded: spanEndEvent relies on it
    return nullptr;
  }

  std::shared_ptr<const DeviceContext> context;
  std::vector<std::shared_ptr<Event>> events; // every event recorded
  uint32_t commandBuffer = 0;
  std::vector<Timed> commands;
  hipEvent_t spanStart = nullptr;
  hipEvent_t spanEnd = nullptr;
};

// An issued operation waiting for the device.
struct Completion {
  std::unique_ptr<Operation> operation;
  std::shared_ptr<Event> event;      // recorded after its work, if issued
  // Launched after |event| when the operation has collectives.
  std::shared_ptr<StreamNotification> notification;
  kiln_status_t status = nullptr;    // issue failure (owned)
  std::unique_ptr<SubmissionTimer> timer;  // profiled submissions
  uint8_t* deferredFree = nullptr;   // dealloca'd storage to free after
  MemoryKind deferredKind = MemoryKind::Device;
  kiln_device_size_t deferredSize = 0;
};

struct HipDevice;

// The device queue's QueueProgress: lets threads waiting on its semaphores
// finish its completions. Held by the device and (weakly) by semaphore
// timepoints; a waiter may hold it past the device's destruction, so the
// device is reached only under |finishMutex| and cleared once its queue
// threads ended.
class DeviceProgress final : public QueueProgress {
public:
  explicit DeviceProgress(HipDevice *device) : device(device) {}
  bool step() override;
  void addStepper(int delta) override {
    steppers.fetch_add(delta, std::memory_order_acq_rel);
  }

  // Held while a completion is finished, so that completions finish one at
  // a time and in submission order, whichever thread finishes them.
  std::mutex finishMutex;
  HipDevice *device; // guarded by finishMutex; null once destroyed
  std::atomic<int> steppers{0};
};

struct HipDevice {
  kiln_hal_device_t base;
  kiln_hal_driver_t* driver = nullptr;  // retained
  std::shared_ptr<const DeviceContext> context;
  HipAllocator allocator;
  hipStream_t stream = nullptr;
  std::atomic<uint64_t> executeCount{0};

  drivers::OperationQueue<Operation> queue;
  std::thread issueThread;
  // Held while an operation is issued, by the issue thread or by a caller
  // issuing inline; |queued| counts operations pushed but not yet issued.
  // A caller issues its submission itself when nothing is queued before it
  // and its waits are met already: the hand-off to the issue thread costs
  // microseconds of every synchronous call.
  std::mutex issueMutex;
  std::atomic<size_t> queued{0};

  // Completions in submission order. Pushed under |completionMutex|,
  // popped under |progress->finishMutex| too (so the front stays put while
  // the thread holding that checks it), by the completion thread or by a
  // waiter stepping the queue.
  std::mutex completionMutex;
  std::condition_variable completionChanged;
  std::deque<Completion> completions;
  // completions.size(), readable without the mutex (the completion thread
  // polls it for spinWaitUs before it sleeps).
  std::atomic<size_t> pendingCompletions{0};
  std::shared_ptr<DeviceProgress> progress;
  bool issueDone = false;
  bool completionDone = false;
  std::thread completionThread;

  void issueMain();
  void completionMain();
  // Resolves the waits, issues and hands |operation| to the completion
  // thread (device bound by the caller; |bindStatus| borrowed).
  void process(std::unique_ptr<Operation> operation, kiln_status_t bindStatus);
  // Issues |operation| on the calling thread if that keeps submission order
  // and needs no waiting; false (operation untouched) otherwise.
  bool tryIssueInline(std::unique_ptr<Operation>& operation);
  // Queues |operation| for the issue thread.
  void enqueue(std::unique_ptr<Operation> operation) {
    queued.fetch_add(1, std::memory_order_acq_rel);
    queue.push(std::move(operation));
  }
  kiln_status_t resolveWaits(const Operation& operation);
  kiln_status_t issue(Operation& operation, Completion* completion);
  // Waits for |completion|'s work and signals its semaphores; |eventResult|
  // (if set): what querying its event returned once it was done.
  void finish(Completion &completion, const hipError_t *eventResult = nullptr);
  // Waits for |event| (spinWaitUs of polling, then a blocking wait).
  hipError_t waitForEvent(hipEvent_t event);
  // Whether finishing |completion| now cannot block: its work is done (or
  // failed) and what it waited for was signalled (or failed). Completions
  // with collectives are left to the completion thread, which watches their
  // communicators while it waits.
  // |eventResult|: what querying its event returned (hipSuccess if none).
  bool readyToFinish(const Completion &completion,
                     hipError_t *eventResult) const;
  // Pops the front completion (progress->finishMutex held).
  bool popFront(Completion *out);
  // Finishes the front completion if it is ready (progress->finishMutex
  // held); |bindCaller|: make the device current around it (a waiter's
  // thread). True if it finished one.
  bool finishFrontIfReady(bool bindCaller);
};

bool DeviceProgress::step() {
  std::unique_lock<std::mutex> lock(finishMutex, std::try_to_lock);
  if (!lock.owns_lock() || !device)
    return false;
  return device->finishFrontIfReady(/*bindCaller=*/true);
}

HipDevice* cast(kiln_hal_device_t* device) {
  return reinterpret_cast<HipDevice*>(device);
}

kiln_status_t HipDevice::resolveWaits(const Operation& operation) {
  const DeviceContext& ctx = *context;
  for (size_t i = 0; i < operation.wait.semaphores.size(); ++i) {
    kiln_hal_semaphore_t* semaphore = operation.wait.semaphores[i];
    uint64_t value = operation.wait.values[i];
    while (true) {
      kiln_time_t deadline = timeNow() + kShutdownPollNs;
      std::shared_ptr<Event> event;
      kiln_status_t status =
          isHipSemaphore(semaphore)
              ? acquireTimepoint(semaphore, value, deadline, &event)
              : semaphoreVTable(semaphore)->wait(semaphore, value, deadline);
      if (statusCode(status) == KILN_STATUS_DEADLINE_EXCEEDED) {
        freeStatus(status);
        if (queue.isStopping())
          return makeStatus(KILN_STATUS_ABORTED,
                            "hip://%d was destroyed while a queue operation "
                            "still waited for semaphore %zu to reach %llu",
                            ctx.ordinal, i, (unsigned long long)value);
        continue;
      }
      if (status)
        return annotate(status, "wait semaphore %zu of a queue operation on "
                                "hip://%d",
                        i, ctx.ordinal);
      // Work recorded on this device's own stream is ordered already.
      if (event && &event->deviceContext() != &ctx)
        KILN_HIP_RETURN_IF_ERROR(ctx.check(
            ctx.platform->streamWaitEvent(stream, event->get()),
            "hipStreamWaitEvent"));
      break;
    }
  }
  return nullptr;
}

kiln_status_t HipDevice::issue(Operation& operation, Completion* completion) {
  switch (operation.kind) {
    case OperationKind::Alloca:
      return allocateStorage(asHipBuffer(operation.buffer), stream);
    case OperationKind::Dealloca: {
      HipBuffer* buffer = asHipBuffer(operation.buffer);
      if (!buffer->queueAllocated) return nullptr;
      completion->deferredKind = buffer->kind;
      completion->deferredSize = buffer->base.byte_length;
      return releaseStorage(buffer, stream, &completion->deferredFree);
    }
    case OperationKind::Execute: {
      if (operation.injectFailure)
        return makeStatus(
            KILN_STATUS_ABORTED,
            "injected failure ($KILN_HIP_INJECT_FAILURE=%llu): the kernel "
            "launches of submission %llu to hip://%d failed",
            (unsigned long long)context->options.injectFailureEvery,
            (unsigned long long)operation.sequence, context->ordinal);
      SubmissionTimer* timer = nullptr;
      if (operation.profile) {
        completion->timer = std::make_unique<SubmissionTimer>(context);
        timer = completion->timer.get();
        KILN_HIP_RETURN_IF_ERROR(timer->markSpan(stream, /*end=*/false));
      }
      // Span profiles time the submission as it is issued unprofiled.
      const bool timeCommands =
          timer && operation.profile->mode == KILN_HAL_PROFILE_COMMANDS;
      for (size_t i = 0; i < operation.commandBuffers.size(); ++i) {
        kiln_status_t status = nullptr;
        if (timeCommands) {
          timer->setCommandBuffer(uint32_t(i));
          status = issueCommandBufferTimed(operation.commandBuffers[i],
                                           operation.tables[i].data(), stream,
                                           timer);
        } else {
          status = issueCommandBuffer(operation.commandBuffers[i],
                                      operation.tables[i].data(), stream);
        }
        if (status)
          return annotate(status, "command buffer %zu of a submission to "
                                  "hip://%d",
                          i, context->ordinal);
      }
      if (timer) return timer->markSpan(stream, /*end=*/true);
      return nullptr;
    }
  }
  return nullptr;
}

void HipDevice::issueMain() {
  kiln_status_t bindStatus = context->bind();
  const kiln_duration_t spinNs =
      kiln_duration_t(context->options.spinWaitUs) * 1000;
  while (std::unique_ptr<Operation> operation = queue.pop(spinNs)) {
    std::lock_guard<std::mutex> lock(issueMutex);
    process(std::move(operation), bindStatus);
    queued.fetch_sub(1, std::memory_order_acq_rel);
  }
  freeStatus(bindStatus);
  {
    std::lock_guard<std::mutex> lock(completionMutex);
    issueDone = true;
  }
  completionChanged.notify_one();
}

void HipDevice::process(std::unique_ptr<Operation> operation,
                        kiln_status_t bindStatus) {
  Completion completion;
  kiln_status_t status = cloneStatus(bindStatus);
  if (!status) status = resolveWaits(*operation);
  if (!status) {
    status = issue(*operation, &completion);
    // Even a partly issued operation gets an event, so that its resources
    // outlive the work already on the stream. A profiled submission's span
    // ends with the last of its work: that event serves.
    std::shared_ptr<Event> event =
        completion.timer ? completion.timer->spanEndEvent() : nullptr;
    kiln_status_t eventStatus = nullptr;
    if (!event) {
      eventStatus = Event::create(context, &event);
      if (!eventStatus)
        eventStatus =
            context->check(context->platform->eventRecord(event->get(), stream),
                           "hipEventRecord");
    }
    if (eventStatus) {
      if (!status) status = eventStatus;
      else freeStatus(eventStatus);
      // Without an event the stream must drain before the release.
      context->platform->streamSynchronize(stream);
      event.reset();
    }
    completion.event = event;
    if (event && !operation->comms.empty()) {
      // Wakes the completion thread's wait for the collectives (see
      // waitWithComms); without it the wait polls, and the failure to
      // launch it fails the submission.
      kiln_status_t notifyStatus = StreamNotification::launch(
          *context, stream, &completion.notification);
      if (!status) status = notifyStatus;
      else freeStatus(notifyStatus);
    }
    if (!status) {
      const SemaphoreList& signal = operation->signal;
      for (size_t i = 0; i < signal.semaphores.size(); ++i)
        if (isHipSemaphore(signal.semaphores[i]))
          addTimepoint(signal.semaphores[i], signal.values[i], event, progress);
    }
  }
  completion.status = status;
  completion.operation = std::move(operation);
  {
    std::lock_guard<std::mutex> lock(completionMutex);
    completions.push_back(std::move(completion));
    pendingCompletions.fetch_add(1, std::memory_order_release);
  }
  completionChanged.notify_one();
}

// Whether |operation|'s waits are met now (or are device timepoints that a
// stream wait satisfies), so that issuing it cannot block.
bool waitsMet(const Operation& operation) {
  for (size_t i = 0; i < operation.wait.semaphores.size(); ++i) {
    kiln_hal_semaphore_t* semaphore = operation.wait.semaphores[i];
    uint64_t value = operation.wait.values[i];
    kiln_status_t status = nullptr;
    if (isHipSemaphore(semaphore)) {
      std::shared_ptr<Event> event;
      status = acquireTimepoint(semaphore, value, /*deadline=*/0, &event);
    } else {
      uint64_t current = 0;
      status = semaphoreVTable(semaphore)->query(semaphore, &current);
      if (!status && current < value)
        status = makeStatus(KILN_STATUS_DEADLINE_EXCEEDED, "not reached");
    }
    // A failed wait is met too: issuing reports it.
    bool pending = statusCode(status) == KILN_STATUS_DEADLINE_EXCEEDED;
    freeStatus(status);
    if (pending) return false;
  }
  return true;
}

bool HipDevice::tryIssueInline(std::unique_ptr<Operation>& operation) {
  std::unique_lock<std::mutex> lock(issueMutex, std::try_to_lock);
  if (!lock.owns_lock() || queued.load(std::memory_order_acquire) != 0 ||
      !waitsMet(*operation))
    return false;
  Platform& platform = *context->platform;
  uintptr_t callerCurrent = 0;
  bool restore = false;
  if (platform.bindForCaller(context->ordinal, &callerCurrent, &restore) !=
      hipSuccess)
    return false;
  process(std::move(operation), /*bindStatus=*/nullptr);
  if (restore) platform.restoreCurrent(callerCurrent);
  return true;
}

void HipDevice::finish(Completion &completion, const hipError_t *eventResult) {
  const DeviceContext& ctx = *context;
  kiln_status_t status = completion.status;
  completion.status = nullptr;
  Operation& operation = *completion.operation;
  if (completion.event && !operation.comms.empty()) {
    // Collectives may wait for peers indefinitely: poll, so that
    // asynchronous NCCL errors and aborts end the wait.
    kiln_status_t waitStatus =
        waitWithComms(ctx, completion.event->get(),
                      completion.notification.get(), operation.comms);
    if (!status)
      status = annotate(waitStatus, "a submission with collectives on "
                                    "hip://%d",
                        ctx.ordinal);
    else
      freeStatus(waitStatus);
    completion.event.reset();
    completion.notification.reset();
  } else if (completion.event) {
    hipError_t error =
        eventResult ? *eventResult : waitForEvent(completion.event->get());
    if (error != hipSuccess && !status)
      status = annotate(ctx.check(error, "hipEventSynchronize",
                                  KILN_STATUS_ABORTED),
                        "the device failed while running a submission");
    completion.event.reset();
  }
  if (completion.timer && !status)
    status = annotate(completion.timer->collect(operation.profile),
                      "reading the profile of a submission to hip://%d",
                      ctx.ordinal);
  completion.timer.reset();
  // Waits satisfied on the device (stream waits on events) complete before
  // their signalling submission's host signal; wait for it here so that a
  // failure there reaches this submission's signals too.
  for (size_t i = 0; i < operation.wait.semaphores.size() && !status; ++i) {
    kiln_hal_semaphore_t* semaphore = operation.wait.semaphores[i];
    while (true) {
      kiln_status_t waitStatus = semaphoreVTable(semaphore)->wait(
          semaphore, operation.wait.values[i], timeNow() + kShutdownPollNs);
      if (statusCode(waitStatus) == KILN_STATUS_DEADLINE_EXCEEDED) {
        freeStatus(waitStatus);
        continue;
      }
      if (waitStatus)
        status = annotate(waitStatus, "wait semaphore %zu of a submission to "
                                      "hip://%d",
                          i, ctx.ordinal);
      break;
    }
  }
  if (completion.deferredFree)
    freeDetached(ctx, completion.deferredKind, completion.deferredFree,
                 completion.deferredSize);
  // Signal after releasing the operation's references, so that a waiter
  // sees the resources it handed over released.
  SemaphoreList signal;
  signal.semaphores.swap(operation.signal.semaphores);
  signal.values.swap(operation.signal.values);
  completion.operation.reset();
  // This rank's part of later collective calls never runs: its peers'
  // compiled collectives must not wait for it.
  if (status) ctx.windowAborts->abortAll();
  drivers::signalOrFail(*hostApi(), signal, status);
  freeStatus(status);
}

hipError_t HipDevice::waitForEvent(hipEvent_t event) {
  // Poll first: the end of short work is seen within microseconds, where
  // the blocking wait sleeps until the driver's interrupt. Yielding keeps
  // the poll polite to other threads on the core.
  Platform& platform = *context->platform;
  const kiln_time_t spinUntil =
      timeNow() + kiln_time_t(context->options.spinWaitUs) * 1000;
  while (true) {
    hipError_t error = platform.eventQuery(event);
    if (error != hipErrorNotReady) return error;
    if (timeNow() >= spinUntil) break;
    std::this_thread::yield();
  }
  return platform.eventSynchronize(event);
}

bool HipDevice::readyToFinish(const Completion &completion,
                              hipError_t *eventResult) const {
  const Operation &operation = *completion.operation;
  if (!operation.comms.empty())
    return false;
  *eventResult = completion.event
                     ? context->platform->eventQuery(completion.event->get())
                     : hipSuccess;
  if (*eventResult == hipErrorNotReady)
    return false;
  for (size_t i = 0; i < operation.wait.semaphores.size(); ++i) {
    kiln_hal_semaphore_t *semaphore = operation.wait.semaphores[i];
    uint64_t value = 0;
    kiln_status_t status = semaphoreVTable(semaphore)->query(semaphore, &value);
    bool pending = !status && value < operation.wait.values[i];
    freeStatus(status);
    if (pending)
      return false;
  }
  return true;
}

bool HipDevice::popFront(Completion *out) {
  std::lock_guard<std::mutex> lock(completionMutex);
  if (completions.empty())
    return false;
  *out = std::move(completions.front());
  completions.pop_front();
  pendingCompletions.fetch_sub(1, std::memory_order_release);
  return true;
}

bool HipDevice::finishFrontIfReady(bool bindCaller) {
  const Completion *front = nullptr;
  {
    std::lock_guard<std::mutex> lock(completionMutex);
    if (completions.empty())
      return false;
    front = &completions.front(); // stays put: popped only by us
  }
  hipError_t eventResult = hipSuccess;
  if (!readyToFinish(*front, &eventResult))
    return false;
  Platform &platform = *context->platform;
  uintptr_t callerCurrent = 0;
  bool restore = false;
  if (bindCaller && platform.bindForCaller(context->ordinal, &callerCurrent,
                                           &restore) != hipSuccess)
    return false; // the completion thread finishes it
  Completion completion;
  popFront(&completion);
  finish(completion, &eventResult);
  if (restore)
    platform.restoreCurrent(callerCurrent);
  return true;
}

void HipDevice::completionMain() {
  kiln_status_t bindStatus = context->bind();
  freeStatus(bindStatus);  // reported by the issue thread's own bind
  const kiln_duration_t spinNs =
      kiln_duration_t(context->options.spinWaitUs) * 1000;
  while (true) {
    // Poll for the next submission before sleeping: the issue thread's
    // notify then costs no wake-up.
    kiln_time_t spinUntil = timeNow() + spinNs;
    while (pendingCompletions.load(std::memory_order_acquire) == 0 &&
           timeNow() < spinUntil && !queue.isStopping())
      std::this_thread::yield();
    {
      std::unique_lock<std::mutex> lock(completionMutex);
      completionChanged.wait(
          lock, [this] { return issueDone || !completions.empty(); });
      if (completions.empty()) {  // issue thread done and drained
        completionDone = true;
        completionChanged.notify_all();
        return;
      }
    }
    // Finish the completions as they become ready, polling for spinWaitUs
    // (left to waiters while one steps the queue), then waiting blocked.
    spinUntil = timeNow() + spinNs;
    while (pendingCompletions.load(std::memory_order_acquire) != 0) {
      if (progress->steppers.load(std::memory_order_acquire) == 0) {
        std::unique_lock<std::mutex> lock(progress->finishMutex,
                                          std::try_to_lock);
        if (lock.owns_lock() && finishFrontIfReady(/*bindCaller=*/false)) {
          spinUntil = timeNow() + spinNs;
          continue;
        }
      }
      bool frontHasComms = false;
      {
        std::lock_guard<std::mutex> lock(completionMutex);
        frontHasComms = !completions.empty() &&
                        !completions.front().operation->comms.empty();
      }
      if (!frontHasComms && timeNow() < spinUntil) {
        std::this_thread::yield();
        continue;
      }
      // Collectives, or long work: wait for the front blocked.
      std::lock_guard<std::mutex> lock(progress->finishMutex);
      Completion completion;
      if (popFront(&completion))
        finish(completion);
      spinUntil = timeNow() + spinNs;
    }
  }
}

//===----------------------------------------------------------------------===//
// Vtable
//===----------------------------------------------------------------------===//

void destroy(kiln_hal_resource_t* resource) {
  HipDevice* device = cast(reinterpret_cast<kiln_hal_device_t*>(resource));
  device->queue.stop();
  const DeviceContext& context = *device->context;
  if (context.comms->any()) {
    // A collective whose peers never come would keep the queue threads
    // waiting forever: after a grace period, abort the communicators (their
    // kernels then end and the submissions fail with ABORTED).
    std::unique_lock<std::mutex> lock(device->completionMutex);
    if (!device->completionChanged.wait_for(
            lock, kCollectiveAbortGrace,
            [device] { return device->completionDone; })) {
      lock.unlock();
      context.comms->abortAll(
          "hip://" + std::to_string(context.ordinal) +
          " was destroyed while a collective still waited for its peers");
    }
  }
  if (device->issueThread.joinable()) device->issueThread.join();
  if (device->completionThread.joinable()) device->completionThread.join();
  {
    // Waiters that still hold the progress find no device from now on.
    std::lock_guard<std::mutex> lock(device->progress->finishMutex);
    device->progress->device = nullptr;
  }
  if (device->stream) {
    kiln_status_t status = device->context->bind();
    if (!status) device->context->platform->streamDestroy(device->stream);
    freeStatus(status);
  }
  // Released windows' memory that peers may still map: freed now, after
  // they close it (a bounded wait).
  drainRetiredWindows(context);
  // Buffers that outlive the device free their storage directly.
  context.deviceBlocks->close();
  context.hostBlocks->close();
  {
    DriverShared& shared = *context.driver;
    std::lock_guard<std::mutex> lock(shared.mutex);
    --shared.openDevices[size_t(context.ordinal)];
  }
  kiln_hal_driver_t* driver = device->driver;
  delete device;
  release(driver);
}

kiln_status_t queryInfo(kiln_hal_device_t* base,
                        kiln_hal_device_info_t* outInfo) {
  const DeviceContext& context = *cast(base)->context;
  Platform& platform = *context.platform;
  char name[128] = {0};
  if (platform.deviceGetName(name, sizeof(name) - 1, context.ordinal) !=
      hipSuccess)
    std::snprintf(name, sizeof(name), "GPU %d", context.ordinal);
  // Peers this device reaches directly (NVLink / PCIe P2P).
  std::string peers;
  {
    DriverShared& shared = *context.driver;
    std::lock_guard<std::mutex> lock(shared.mutex);
    for (const auto& pair : shared.peerAccess)
      if (pair.first == context.ordinal)
        peers += (peers.empty() ? "; peer access: hip://" : ", hip://") +
                 std::to_string(pair.second);
  }
  outInfo->ordinal = uint32_t(context.ordinal);
  std::snprintf(outInfo->name, sizeof(outInfo->name), "%s (%s:%s, %s, %s%s)",
                name, platform.targetBackend(), context.arch.c_str(),
                platform.name(), platform.version().c_str(), peers.c_str());
  return nullptr;
}

kiln_hal_allocator_t* allocator(kiln_hal_device_t* base) {
  return &cast(base)->allocator.base;
}

kiln_status_t createSemaphoreFn(kiln_hal_device_t* base, uint64_t initialValue,
                                kiln_hal_semaphore_t** outSemaphore) {
  return createSemaphore(
      initialValue,
      kiln_duration_t(cast(base)->context->options.spinWaitUs) * 1000,
      outSemaphore);
}

kiln_status_t createCommandBufferFn(
    kiln_hal_device_t* base, kiln_hal_command_buffer_mode_t mode,
    uint32_t bindingCapacity, kiln_hal_command_buffer_t** outCommandBuffer) {
  return createCommandBuffer(cast(base)->context, mode, bindingCapacity,
                             outCommandBuffer);
}

kiln_status_t createExecutableCacheFn(kiln_hal_device_t* base,
                                      kiln_hal_executable_cache_t** outCache) {
  return createExecutableCache(cast(base)->context, outCache);
}

kiln_status_t createChannelFn(kiln_hal_device_t* base,
                              const kiln_hal_channel_params_t* params,
                              kiln_hal_channel_t** outChannel) {
  return createChannel(cast(base)->context, params, outChannel);
}

kiln_status_t createChannelIdFn(kiln_hal_device_t* base, uint8_t* outId,
                                size_t capacity, size_t* outLength) {
  return createChannelId(cast(base)->context, outId, capacity, outLength);
}

kiln_status_t queueAlloca(kiln_hal_device_t* base, kiln_hal_queue_affinity_t,
                          const kiln_hal_semaphore_list_t* wait,
                          const kiln_hal_semaphore_list_t* signal,
                          const kiln_hal_buffer_params_t* params,
                          kiln_device_size_t size,
                          kiln_hal_buffer_t** outBuffer) {
  HipDevice* device = cast(base);
  kiln_hal_buffer_t* buffer = nullptr;
  KILN_HIP_RETURN_IF_ERROR(createBuffer(device->context, params, size,
                                        /*allocateNow=*/false, &buffer));
  auto operation =
      std::make_unique<Operation>(OperationKind::Alloca, *wait, *signal);
  operation->setBuffer(buffer);
  device->enqueue(std::move(operation));
  *outBuffer = buffer;
  return nullptr;
}

kiln_status_t queueDealloca(kiln_hal_device_t* base, kiln_hal_queue_affinity_t,
                            const kiln_hal_semaphore_list_t* wait,
                            const kiln_hal_semaphore_list_t* signal,
                            kiln_hal_buffer_t* buffer) {
  if (!asHipBuffer(buffer))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "queue_dealloca: buffer was not created by the hip "
                      "driver");
  auto operation =
      std::make_unique<Operation>(OperationKind::Dealloca, *wait, *signal);
  operation->setBuffer(buffer);
  cast(base)->enqueue(std::move(operation));
  return nullptr;
}

kiln_status_t queueExecuteProfiled(
    kiln_hal_device_t* base, kiln_hal_queue_affinity_t,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, uint32_t commandBufferCount,
    kiln_hal_command_buffer_t* const* commandBuffers,
    const kiln_hal_binding_table_t* bindingTables,
    kiln_hal_execution_profile_t* profile) {
  HipDevice* device = cast(base);
  auto operation =
      std::make_unique<Operation>(OperationKind::Execute, *wait, *signal);
  for (uint32_t i = 0; i < commandBufferCount; ++i) {
    kiln_hal_binding_table_t resolved =
        operation->addBindingTable(bindingTables[i]);
    kiln_status_t status =
        validateBindingTable(commandBuffers[i], *device->context, resolved);
    if (status)
      return annotate(status, "command buffer %u of a submission to hip://%d",
                      i, device->context->ordinal);
  }
  for (uint32_t i = 0; i < commandBufferCount; ++i) {
    operation->addCommandBuffer(commandBuffers[i]);
    collectiveComms(commandBuffers[i], &operation->comms);
  }
  operation->profile = profile;
  operation->sequence = ++device->executeCount;
  uint64_t every = device->context->options.injectFailureEvery;
  operation->injectFailure = every != 0 && operation->sequence % every == 0;
  if (!device->tryIssueInline(operation)) device->enqueue(std::move(operation));
  return nullptr;
}

kiln_status_t queueExecute(kiln_hal_device_t* base,
                           kiln_hal_queue_affinity_t affinity,
                           const kiln_hal_semaphore_list_t* wait,
                           const kiln_hal_semaphore_list_t* signal,
                           uint32_t commandBufferCount,
                           kiln_hal_command_buffer_t* const* commandBuffers,
                           const kiln_hal_binding_table_t* bindingTables) {
  return queueExecuteProfiled(base, affinity, wait, signal, commandBufferCount,
                              commandBuffers, bindingTables, nullptr);
}

kiln_status_t queueFlush(kiln_hal_device_t*, kiln_hal_queue_affinity_t) {
  return nullptr;  // operations are issued as soon as their waits allow
}

kiln_status_t queryMemoryStats(kiln_hal_device_t* base,
                               kiln_hal_device_memory_stats_t* outStats) {
  cast(base)->context->deviceBlocks->stats(outStats);
  return nullptr;
}

kiln_status_t trim(kiln_hal_device_t* base) {
  const DeviceContext& context = *cast(base)->context;
  context.deviceBlocks->trim();
  context.hostBlocks->trim();
  return nullptr;
}

// Kiln's work runs on the device's one stream (the issue thread launches
// there), so that is the stream a DLPack producer orders its writes before.
kiln_status_t queryExternalInfo(kiln_hal_device_t* base,
                                kiln_hal_device_external_info_t* outInfo) {
  HipDevice* device = cast(base);
  outInfo->memory_type = deviceMemoryType(*device->context);
  outInfo->device_ordinal = device->context->ordinal;
  outInfo->stream = reinterpret_cast<uintptr_t>(device->stream);
  return nullptr;
}

kiln_status_t waitExternalStream(kiln_hal_device_t* base, uint64_t value) {
  HipDevice* device = cast(base);
  const DeviceContext& context = *device->context;
  KILN_HIP_RETURN_IF_ERROR(context.bind());
  std::shared_ptr<Event> event;
  KILN_HIP_RETURN_IF_ERROR(Event::create(device->context, &event));
  KILN_HIP_RETURN_IF_ERROR(
      context.check(context.platform->eventRecord(
                        event->get(), context.platform->externalStream(value)),
                    "hipEventRecord on an external stream"));
  return context.check(context.platform->eventSynchronize(event->get()),
                       "hipEventSynchronize");
}

const kiln_hal_device_vtable_t kVTable = {
    destroy,
    queryInfo,
    allocator,
    createSemaphoreFn,
    createCommandBufferFn,
    createExecutableCacheFn,
    createChannelFn,
    createChannelIdFn,
    queueAlloca,
    queueDealloca,
    queueExecute,
    queueFlush,
    queryMemoryStats,
    trim,
    queueExecuteProfiled,
    queryExternalInfo,
    waitExternalStream,
};

}  // namespace

kiln_status_t createDevice(kiln_hal_driver_t* driver,
                           std::shared_ptr<const DeviceContext> context,
                           kiln_hal_device_t** outDevice) {
  KILN_HIP_RETURN_IF_ERROR(context->bind());
  hipStream_t stream = nullptr;
  KILN_HIP_RETURN_IF_ERROR(context->check(
      context->platform->streamCreate(&stream), "hipStreamCreateWithFlags"));
  std::shared_ptr<DeviceProgress> progress(new (std::nothrow)
                                               DeviceProgress(nullptr));
  auto *device = progress ? new (std::nothrow) HipDevice() : nullptr;
  if (!device) {
    context->platform->streamDestroy(stream);
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating hip://%d", context->ordinal);
  }
  kiln_hal_resource_initialize(&kVTable, &device->base.resource);
  device->base.driver_name = driver->name;
  retain(driver);
  device->driver = driver;
  device->stream = stream;
  device->context = context;
  initializeAllocator(context, &device->allocator);
  progress->device = device;
  device->progress = std::move(progress);
  device->issueThread = std::thread([device] { device->issueMain(); });
  device->completionThread = std::thread([device] { device->completionMain(); });
  *outDevice = &device->base;
  return nullptr;
}

}  // namespace kiln::hip
