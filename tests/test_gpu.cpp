// GPU presence and the device query. Skips, saying why, on machines without a CUDA device.
#include "common/device.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

TEST(Gpu, DeviceQueryReportsADeviceOrWhyNot) {
  const GpuStatus status = gpu_status();
  if (!status.usable()) {
    EXPECT_FALSE(status.unavailable_reason.empty());
    GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  }
  EXPECT_TRUE(status.built_with_cuda);
  EXPECT_GT(status.device_count, 0);
  EXPECT_FALSE(status.name.empty());
}

}  // namespace
}  // namespace amgsolve
