// A named model's schedule as the catalogs hold it (model_schedule.cpp): its
// dperm.model_schedules row and its pg_cron job, which scheduled retraining
// (model_cron.cpp) and dropping a model (models.cpp) both change.
#pragma once

#include "base/boundary.hpp"

namespace dperm::pg {

// The schema of pg_cron's functions and tables, or nullptr when pg_cron is
// not installed. Needs SPI.
char* CronSchema(MemoryContext context);

// Removes pg_cron job `jobid` if it still exists (as the caller). Needs SPI.
void UnscheduleJob(const char* cron, int64 jobid);

// The recorded pg_cron job of `owner`'s model `name` (*found: whether the
// model has a schedule), or -1. Needs SPI.
int64 ScheduledJob(const char* name, Oid owner, bool* found);

// Deletes the schedule of `owner`'s model `name`. Needs SPI.
void DeleteSchedule(const char* name, Oid owner);

}  // namespace dperm::pg
