import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, w_0, w_1, i):
        tmp_0 = torch.nn.functional.interpolate(in_0[None], size=(6, 8), mode="bilinear", align_corners=False)
        tmp_1 = torch.nn.functional.adaptive_avg_pool2d(tmp_0, 1)
        tmp_2 = torch.nn.functional.pad(in_1, [0, 1], "constant", None)
        tmp_3 = torch.prelu(tmp_0, w_0[:1])
        return (tmp_1, tmp_2, tmp_3)
