// The dashboard's embedded files (generated from dashboard/web at build time).
#pragma once

namespace tailforge {

struct DashboardAsset {
  const char* name;          // file name under dashboard/web, e.g. "app.js"
  const char* content_type;
  const char* body;
};

extern const DashboardAsset kDashboardAssets[];
extern const int kDashboardAssetCount;

}  // namespace tailforge
