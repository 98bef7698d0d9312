// Every header of the boundary, for files not yet switched to the headers of
// what they use (new code includes those directly: one header per source
// file). Include core headers first, then this file.
#pragma once
#include "aggregate.hpp"
#include "arrays.hpp"
#include "charge.hpp"
#include "citus.hpp"
#include "internal_sql.hpp"
#include "model_type.hpp"
#include "module.hpp"
#include "options_pg.hpp"
#include "pass_aggregate.hpp"
#include "protect.hpp"
#include "relations.hpp"
#include "streaming.hpp"
