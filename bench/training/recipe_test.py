"""bench/training/recipe.py (the training recipe train_ddp.py applies) against the worker.

The schedule's values are tests/worker/train/lr_schedule_test.cc's closed-form
values, so the Python and the C++ schedule are checked against the same
numbers; the horizon against worker/train/step_plan.cc's arithmetic; the
param groups, the optimizers' settings, the autocast rules and
example_job.py's recipes against what the worker builds from the same job.
    /usr/bin/python3 bench/training/recipe_test.py
"""
import math
import os
import sys
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))  # example_job.py
import example_job  # noqa: E402
import recipe  # noqa: E402


def schedule(kind, warmup=0, min_lr=0.0, decay_steps=0, **more):
    return dict(kind=f"LR_SCHEDULE_KIND_{kind}", warmup_steps=warmup, min_lr=min_lr,
                decay_steps=decay_steps, **more)


class ScheduleTest(unittest.TestCase):
    def test_constant_is_the_peak_at_every_step(self):
        for s in ({}, schedule("UNSPECIFIED"), schedule("CONSTANT")):
            for t in (0, 1, 99, 100, 1000000):
                self.assertEqual(recipe.lr_at(s, 0.1, t, 100), 0.1)

    def test_warmup_ramps_linearly_to_the_peak_at_its_last_step(self):
        s = schedule("CONSTANT", 4)
        for t, want in ((0, 0.2), (1, 0.4), (2, 0.6), (3, 0.8), (4, 0.8)):
            self.assertAlmostEqual(recipe.lr_at(s, 0.8, t, 100), want, places=15)
        # Warmup ignores the floor: it starts below it.
        self.assertAlmostEqual(recipe.lr_at(schedule("COSINE", 4, 0.5), 0.8, 0, 100), 0.2)

    def test_cosine_from_the_peak_to_the_floor_at_the_horizon(self):
        s = schedule("COSINE", 10, 0.01)  # H = 110 planned
        want = lambda t: 0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * (t - 10) / 100.0))
        self.assertEqual(recipe.lr_at(s, 1.0, 9, 110), 1.0)
        self.assertEqual(recipe.lr_at(s, 1.0, 10, 110), 1.0)
        self.assertAlmostEqual(recipe.lr_at(s, 1.0, 60, 110), 0.01 + 0.99 * 0.5, places=15)
        for t in (11, 35, 85, 109):
            self.assertAlmostEqual(recipe.lr_at(s, 1.0, t, 110), want(t), places=15)
        self.assertEqual(recipe.lr_at(s, 1.0, 110, 110), 0.01)
        self.assertEqual(recipe.lr_at(s, 1.0, 5000, 110), 0.01)
        for t in range(10, 110):
            self.assertGreater(recipe.lr_at(s, 1.0, t, 110), recipe.lr_at(s, 1.0, t + 1, 110))

    def test_linear_from_the_peak_to_the_floor_at_the_horizon(self):
        s = schedule("LINEAR", 0, 0.2)
        for t, want in ((0, 1.0), (5, 0.6), (9, 1.0 - 0.8 * 0.9), (10, 0.2), (11, 0.2)):
            self.assertAlmostEqual(recipe.lr_at(s, 1.0, t, 10), want, places=15)

    def test_an_explicit_horizon_wins_over_the_planned_steps(self):
        s = schedule("LINEAR", decay_steps=20)
        self.assertEqual(recipe.decay_horizon(s, 1000), 20)
        self.assertEqual(recipe.decay_horizon(schedule("LINEAR"), 1000), 1000)
        self.assertAlmostEqual(recipe.lr_at(s, 1.0, 10, 1000), 0.5)
        self.assertEqual(recipe.lr_at(s, 1.0, 20, 1000), 0.0)
        self.assertEqual(recipe.lr_at(s, 1.0, 500, 1000), 0.0)

    def test_step_decays_at_each_boundary_down_to_the_floor(self):
        s = schedule("STEP", 2, 0.0015, step_size=3, gamma=0.5)
        for t, want in ((0, 0.05), (1, 0.1), (2, 0.1), (4, 0.1), (5, 0.05), (7, 0.05),
                        (8, 0.025), (11, 0.0125), (14, 0.00625), (17, 0.003125),
                        (20, 0.0015625), (23, 0.0015), (1000000, 0.0015)):
            self.assertAlmostEqual(recipe.lr_at(s, 0.1, t, 0), want, places=15)
        self.assertAlmostEqual(recipe.lr_at(s, 0.1, 8, 9), 0.025)  # STEP ignores H

    def test_step_gamma_zero_means_torchs_default(self):
        s = schedule("STEP", step_size=10)
        self.assertEqual(recipe.lr_at(s, 1.0, 9, 0), 1.0)
        self.assertAlmostEqual(recipe.lr_at(s, 1.0, 10, 0), 0.1)
        self.assertAlmostEqual(recipe.lr_at(s, 1.0, 25, 0), 0.01, places=16)

    def test_a_planned_horizon_inside_the_warmup_never_leaves_it(self):
        self.assertAlmostEqual(recipe.lr_at(schedule("COSINE", 100, 0.01), 1.0, 49, 50), 0.5)

    def test_planned_steps_are_the_workers(self):
        # The benchmark's subsets: 100 steps per epoch at either world size.
        self.assertEqual(recipe.planned_steps(12800, 1, 128, 1), 100)
        self.assertEqual(recipe.planned_steps(12800, 2, 64, 1), 100)
        self.assertEqual(recipe.planned_steps(3200, 2, 16, 3), 300)
        # Shards padded up (DistributedSampler) and a partial last batch.
        self.assertEqual(recipe.planned_steps(10, 3, 2, 1), 2)  # shard 4
        self.assertEqual(recipe.planned_steps(10, 3, 2, 1, drop_last=True), 2)  # shard 3
        self.assertEqual(recipe.planned_steps(10, 3, 1, 2, drop_last=True), 6)
        self.assertEqual(recipe.planned_steps(100, 1, 10, 1, accumulate=3), 4)


class OptimizerTest(unittest.TestCase):
    def gpt(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "gpt"))
        import model
        return model.build(model.GPTConfig(n_layer=2), 1)

    def test_no_decay_group_holds_biases_and_norm_weights(self):
        net = self.gpt()
        spec = {"kind": "OPTIMIZER_KIND_ADAMW", "learning_rate": 1e-3, "weight_decay": 0.1,
                "no_decay_bias_and_norm": True}
        opt = recipe.make_optimizer(net.parameters(), spec)
        decay, no_decay = opt.param_groups
        names = {id(p): n for n, p in net.named_parameters()}
        self.assertEqual(decay["weight_decay"], 0.1)
        self.assertEqual(no_decay["weight_decay"], 0.0)
        self.assertIn("wte.weight", [names[id(p)] for p in decay["params"]])
        self.assertEqual(sorted(names[id(p)] for p in no_decay["params"]),
                         sorted(n for n, p in net.named_parameters() if p.dim() < 2))
        self.assertTrue(any("ln_" in names[id(p)] for p in no_decay["params"]))
        self.assertEqual(len(decay["params"]) + len(no_decay["params"]),
                         len(list(net.parameters())))

    def test_one_group_without_the_flag(self):
        opt = recipe.make_optimizer(self.gpt().parameters(),
                                    {"kind": "OPTIMIZER_KIND_ADAM", "learning_rate": 1e-3})
        self.assertEqual(len(opt.param_groups), 1)
        self.assertIsInstance(opt, torch.optim.Adam)
        g = opt.param_groups[0]
        self.assertEqual((g["betas"], g["eps"], g["weight_decay"]), ((0.9, 0.999), 1e-8, 0.0))

    def test_the_jobs_betas_eps_and_nesterov(self):
        params = self.gpt().parameters()
        opt = recipe.make_optimizer(params, {"kind": "OPTIMIZER_KIND_ADAMW",
                                             "learning_rate": 1e-3, "beta1": 0.8,
                                             "beta2": 0.95, "eps": 1e-6})
        self.assertIsInstance(opt, torch.optim.AdamW)
        g = opt.param_groups[0]
        # AdamW's own default decay is 0.01; the job's unset decay is 0.
        self.assertEqual((g["betas"], g["eps"], g["weight_decay"]), ((0.8, 0.95), 1e-6, 0.0))
        sgd = recipe.make_optimizer(self.gpt().parameters(), {
            "kind": "OPTIMIZER_KIND_SGD", "learning_rate": 0.05, "momentum": 0.9,
            "nesterov": True})
        self.assertTrue(sgd.param_groups[0]["nesterov"])
        self.assertEqual(sgd.param_groups[0]["momentum"], 0.9)

    def test_set_lr_sets_every_group(self):
        net = self.gpt()
        opt = recipe.make_optimizer(net.parameters(), {
            "kind": "OPTIMIZER_KIND_ADAMW", "learning_rate": 1e-3, "weight_decay": 0.1,
            "no_decay_bias_and_norm": True})
        recipe.set_lr(opt, 2.5e-4)
        self.assertEqual([g["lr"] for g in opt.param_groups], [2.5e-4, 2.5e-4])

    def test_clip_scales_to_the_global_norm(self):
        a, b = torch.zeros(2, requires_grad=True), torch.zeros(1, requires_grad=True)
        a.grad, b.grad = torch.tensor([3.0, 0.0]), torch.tensor([4.0])
        self.assertIsNone(recipe.clip([a, b], 0.0))
        self.assertAlmostEqual(float(recipe.clip([a, b], 1.0)), 5.0, places=5)
        self.assertAlmostEqual(float(torch.cat([a.grad, b.grad]).norm()), 1.0, places=5)


class AutocastTest(unittest.TestCase):
    def test_norms_after_a_matrix_product_run_in_float32(self):
        recipe.register_fp32_norms()
        recipe.register_fp32_norms()  # idempotent
        lin, ln, gn = torch.nn.Linear(8, 8), torch.nn.LayerNorm(8), torch.nn.GroupNorm(2, 8)
        x = torch.randn(4, 8)
        with recipe.autocast(True):
            h = lin(x)
            y, z = ln(h), gn(h)
        self.assertEqual(h.dtype, torch.bfloat16)
        self.assertEqual((y.dtype, z.dtype), (torch.float32, torch.float32))
        # The float32 rule: the norm of the bf16 activations, in float32.
        with torch.no_grad():
            torch.testing.assert_close(y, ln(h.float()))
        (y.sum() + z.sum()).backward()
        self.assertEqual(lin.weight.grad.dtype, torch.float32)

    def test_disabled_is_float32(self):
        with recipe.autocast(False):
            self.assertEqual(torch.nn.Linear(4, 4)(torch.randn(2, 4)).dtype, torch.float32)

    def test_bf16_is_the_jobs_precision(self):
        self.assertTrue(recipe.bf16({"precision": "PRECISION_BF16_MIXED"}))
        self.assertFalse(recipe.bf16({"precision": "PRECISION_FP32"}))
        self.assertFalse(recipe.bf16({}))


class ExampleRecipeTest(unittest.TestCase):
    def rewrite(self, example, name, **kw):
        src = os.path.join(HERE, "..", "..", "examples", example)
        path = next(os.path.join(src, f) for f in os.listdir(src) if f.endswith(".textproto"))
        with open(path) as f:
            return example_job.parse(example_job.rewrite(f.read(), "/data", 2, 16, 1,
                                                         recipe=name, **kw))

    def test_recipes_replace_the_optimizer_schedule_and_clipping(self):
        gpt = self.rewrite("gpt", "nanogpt", precision="bf16")
        self.assertEqual(gpt["optimizer"]["kind"], "OPTIMIZER_KIND_ADAMW")
        self.assertEqual(gpt["optimizer"]["weight_decay"], 0.1)
        self.assertIs(gpt["optimizer"]["no_decay_bias_and_norm"], True)
        self.assertEqual(gpt["lr_schedule"]["kind"], "LR_SCHEDULE_KIND_COSINE")
        self.assertEqual(gpt["clip_grad_norm"], 1.0)
        self.assertEqual(gpt["precision"], "PRECISION_BF16_MIXED")
        resnet = self.rewrite("resnet", "torchvision")
        self.assertEqual(resnet["optimizer"]["kind"], "OPTIMIZER_KIND_SGD")
        self.assertIs(resnet["optimizer"]["nesterov"], True)
        self.assertNotIn("precision", resnet)

    def test_without_a_recipe_the_source_optimizer_stays(self):
        gpt = self.rewrite("gpt", None)
        self.assertEqual(gpt["optimizer"], {"kind": "OPTIMIZER_KIND_ADAM",
                                            "learning_rate": 0.001})
        self.assertNotIn("lr_schedule", gpt)


if __name__ == "__main__":
    torch.set_num_threads(1)
    unittest.main()
