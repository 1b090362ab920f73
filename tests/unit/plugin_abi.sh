#!/bin/sh
# Each built plugin must export exactly its Slurm plugin ABI: no more (no C++ or library symbols
# leaking into slurmctld's symbol space), no less (a missing symbol makes Slurm refuse it).
set -u
b=${top_builddir:-.}
fail=0

select_syms="plugin_id plugin_name plugin_type plugin_version init fini
select_p_state_save select_p_state_restore select_p_job_init select_p_node_init select_p_job_test
select_p_job_begin select_p_job_ready select_p_job_expand select_p_job_resized select_p_job_signal
select_p_job_fini select_p_job_suspend select_p_job_resume select_p_step_pick_nodes
select_p_step_start select_p_step_finish select_p_select_nodeinfo_pack
select_p_select_nodeinfo_unpack select_p_select_nodeinfo_alloc select_p_select_nodeinfo_free
select_p_select_nodeinfo_set_all select_p_select_nodeinfo_set select_p_select_nodeinfo_get
select_p_select_jobinfo_alloc select_p_select_jobinfo_free select_p_select_jobinfo_set
select_p_select_jobinfo_get select_p_select_jobinfo_copy select_p_select_jobinfo_pack
select_p_select_jobinfo_unpack select_p_select_jobinfo_sprint select_p_select_jobinfo_xstrdup
select_p_get_info_from_plugin select_p_update_node_config select_p_reconfigure select_p_resv_test"

check() {  # check <plugin .so> <expected symbols...>
  so=$1; shift
  if [ ! -f "$so" ]; then echo "FAIL: $so not built"; fail=1; return; fi
  expected=$(printf '%s\n' "$@" | sort)
  actual=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
  if [ "$expected" != "$actual" ]; then
    echo "FAIL: $so exports differ from its plugin ABI:"
    diff -u /dev/fd/3 /dev/fd/4 3<<EOT 4<<EOT2 | sed -n '3,$p'
$expected
EOT
$actual
EOT2
    fail=1
  else
    echo "ok: $so exports exactly $(echo "$expected" | wc -l) ABI symbols"
  fi
}

check "$b/plugins/spank/.libs/spank_autotune.so" plugin_name plugin_type plugin_version \
  spank_plugin_version slurm_spank_init slurm_spank_init_post_opt slurm_spank_task_init
check "$b/plugins/job_submit/.libs/job_submit_autotune.so" plugin_name plugin_type \
  plugin_version init fini job_submit job_modify
check "$b/plugins/prep/.libs/prep_autotune.so" plugin_name plugin_type plugin_version init fini \
  prep_p_register_callbacks prep_p_prolog prep_p_epilog prep_p_prolog_slurmctld prep_p_epilog_slurmctld \
  prep_p_required
# shellcheck disable=SC2086
check "$b/plugins/select/.libs/select_autotune.so" $select_syms
exit $fail
